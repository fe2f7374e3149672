import { type Compiled, compileFilter, compileKey } from './cel.js';
import { parseDuration, type TriggerConfig } from './config.js';

type Run<T> = Extract<Compiled<T>, { ok: true }>['run'];

export interface CompiledTrigger {
  config: TriggerConfig;
  when?: Run<boolean>;
  key?: Run<string>;
  whenFetched?: Run<boolean>;
  /** 0 without `coalesce`: the run is due at once. */
  windowMs: number;
}

/** A trigger that does not compile stops start-up; messages name the trigger and the field. */
export class TriggerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TriggerConfigError';
  }
}

/** Compiles every CEL expression once; a trigger naming an unconfigured source is an error too. */
export function compileTriggers(
  configs: readonly TriggerConfig[],
  sourceNames: ReadonlySet<string>,
): CompiledTrigger[] {
  return configs.map((config) => {
    if (!sourceNames.has(config.source))
      throw new TriggerConfigError(
        `trigger ${config.id}: source ${config.source} is not configured under sources`,
      );
    return compileTrigger(config);
  });
}

/** Compiles one trigger's CEL (`when`, `when_fetched`, `coalesce.key`); the source it names is not checked. */
export function compileTrigger(config: TriggerConfig): CompiledTrigger {
  const out: CompiledTrigger = { config, windowMs: 0 };
  if (config.when !== undefined) {
    const c = compileFilter(config.when);
    if (!c.ok) throw new TriggerConfigError(`trigger ${config.id}: when: ${c.message}`);
    out.when = c.run;
  }
  if (config.when_fetched !== undefined) {
    const c = compileFilter(config.when_fetched);
    if (!c.ok) throw new TriggerConfigError(`trigger ${config.id}: when_fetched: ${c.message}`);
    out.whenFetched = c.run;
  }
  if (config.coalesce) {
    const c = compileKey(config.coalesce.key);
    if (!c.ok) throw new TriggerConfigError(`trigger ${config.id}: coalesce.key: ${c.message}`);
    out.key = c.run;
    out.windowMs = parseDuration(config.coalesce.window) ?? 0;
  }
  return out;
}
