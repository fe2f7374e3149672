import { type CompiledPolicy, compilePolicy } from './compile.js';
import { loadPolicy, type PolicyProblem, type PolicySource } from './load.js';

export type PrepareResult =
  | { ok: true; compiled: CompiledPolicy; files: string[] }
  | { ok: false; problems: PolicyProblem[] };

/**
 * Load and compile in one step: what start-up, reload (file change, SIGHUP) and `policy lint` all do.
 * Nothing is shared with the serving revision, so a caller swaps one reference on success and keeps
 * the old revision, logging the problems, on failure. `files` are the policy files to watch.
 */
export function preparePolicy(sources: readonly PolicySource[]): PrepareResult {
  const loaded = loadPolicy(sources);
  if (!loaded.ok) return loaded;
  const compiled = compilePolicy(loaded.policy, loaded.origins);
  if (!compiled.ok) return compiled;
  return { ok: true, compiled: compiled.compiled, files: loaded.files };
}
