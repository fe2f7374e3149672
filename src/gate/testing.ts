import { type CompiledPolicy, compilePolicy } from './compile.js';
import { loadPolicy } from './load.js';

/** Compiles a policy written as main-config YAML, failing loudly: for tests and the benchmark. */
export function compileYaml(text: string, name = 'switchboard.yaml'): CompiledPolicy {
  const loaded = loadPolicy([{ kind: 'config', name, text }]);
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => `${p.line}: ${p.path} ${p.message}`).join('\n'));
  const compiled = compilePolicy(loaded.policy, loaded.origins);
  if (!compiled.ok)
    throw new Error(compiled.problems.map((p) => `${p.line}: ${p.path} ${p.message}`).join('\n'));
  return compiled.compiled;
}

/** A 32-byte key that is obviously a test key. */
export const TEST_KEY = { id: 'k1', secret: new Uint8Array(32).fill(7) };
