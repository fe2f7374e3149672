import { z } from 'zod';
import type { ConfigCheck } from '../config/load.js';
import { type CoreConfig, coreConfigShape } from '../config/schema.js';
import { ModuleGraphError } from './kernel.js';
import type { Module } from './module.js';

/**
 * The one config schema, assembled from the core keys and every module's sections: one strict object,
 * so an unknown top-level key is an error with the same message as any other unknown key, and each
 * section is validated by the schema of the module that owns it (no loose placeholder, no second
 * parse in `start()`). Two modules claiming one key is a start-up error naming both.
 */
export function assembleConfigSchema(
  modules: readonly Module[],
): z.ZodType<CoreConfig & Record<string, unknown>> {
  const shape: Record<string, z.ZodType> = { ...coreConfigShape };
  const owner = new Map<string, string>(Object.keys(coreConfigShape).map((k) => [k, 'core']));
  for (const m of modules) {
    for (const [key, schema] of Object.entries(m.config ?? {})) {
      const other = owner.get(key);
      if (other) throw new ModuleGraphError(`config key ${key} is claimed by both ${other} and ${m.name}`);
      owner.set(key, m.name);
      shape[key] = schema;
    }
  }
  return z.strictObject(shape) as unknown as z.ZodType<CoreConfig & Record<string, unknown>>;
}

/** The modules' checks across keys, run after the schema passed. */
export function moduleConfigChecks(modules: readonly Module[]): ConfigCheck[] {
  return modules.flatMap((m) =>
    m.checkConfig ? [(c: CoreConfig) => m.checkConfig!(c as Record<string, unknown>)] : [],
  );
}
