import { z } from 'zod';
import {
  type ConfigCheck,
  type ConfigSpec,
  type LoadedConfig,
  loadConfigWith,
  parseConfigWith,
} from '../config/load.js';
import type { CoreConfig } from '../config/schema.js';
import { egressAllowProblems } from '../egress/index.js';
import { assembleConfigSchema, moduleConfigChecks } from '../kernel/config.js';
import type { Module, SectionValues } from '../kernel/module.js';
import { allModules, type AppModules } from './modules.js';

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;
type SectionsOf<M> = M extends { config?: infer C }
  ? C extends Record<string, z.ZodType>
    ? SectionValues<C>
    : never
  : never;

/** The whole config as the app's modules define it: the core keys and every module's sections. */
export type Config = CoreConfig & UnionToIntersection<SectionsOf<AppModules[number]>>;

/** `egress.allow` entries the SSRF guard cannot read; the core owns the key, the app root checks it. */
const egressCheck: ConfigCheck = (c) =>
  egressAllowProblems(c.egress.allow).map((line) => {
    const m = /^(egress\.allow\[\d+\])\s*(.*)$/.exec(line);
    return m ? { path: m[1]!, message: m[2]! } : { path: 'egress.allow', message: line };
  });

/** The schema and checks assembled from the modules' manifests (default: every module the app runs). */
export function configSpec(modules: readonly Module[] = allModules()): ConfigSpec<Config> {
  return {
    schema: assembleConfigSchema(modules) as unknown as z.ZodType<Config>,
    checks: [...moduleConfigChecks(modules), egressCheck],
  };
}

let cached: ConfigSpec<Config> | undefined;
const appSpec = () => (cached ??= configSpec());

/** Validates a raw config (defaults applied) the way `serve` does; throws ConfigError listing every problem. */
export function parseConfig(raw: unknown, source = 'config', spec: ConfigSpec<Config> = appSpec()): Config {
  return parseConfigWith(spec, raw, source);
}

/** Defaults → file → env, validated once with every module's sections. */
export function loadConfig(
  opts: { path?: string | undefined; env?: NodeJS.ProcessEnv; spec?: ConfigSpec<Config> } = {},
): LoadedConfig<Config> {
  return loadConfigWith(opts.spec ?? appSpec(), opts);
}

/**
 * The JSON Schema of switchboard.yaml, generated from the same assembled schema `serve` validates with
 * (zod 4 `z.toJSONSchema`, the input side: what a user may write, defaults optional). For editors:
 * `switchboard init` points yaml-language-server at it. Checks across keys and CEL are not in it;
 * `switchboard doctor` runs those.
 */
export function configJsonSchema(spec: ConfigSpec<Config> = appSpec()): Record<string, unknown> {
  return {
    ...z.toJSONSchema(spec.schema, { io: 'input', unrepresentable: 'any' }),
    title: 'switchboard.yaml',
    description: 'Switchboard gateway configuration (docs/config.md)',
  };
}
