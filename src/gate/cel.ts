import { Environment } from '@marcbachmann/cel-js';

/**
 * The variables a rule's `when` (and a modify rule's `input_expr`) can read. Declared, not dynamic,
 * so a typo such as `tol == "Bash"` is a lint error instead of a rule that errors on every call.
 */
export const CEL_VARIABLES = {
  tool: 'string',
  input: 'map',
  action: 'dyn',
  resource: 'dyn',
  runtime: 'dyn',
  task: 'map',
  envelope: 'map',
  budgets: 'map',
  now: 'google.protobuf.Timestamp',
} as const;

export type CelVariable = keyof typeof CEL_VARIABLES;
export type CelContext = Record<CelVariable, unknown>;
export type CelProgram = (context: CelContext) => unknown;
export type CelCompiled = { ok: true; program: CelProgram } | { ok: false; message: string };

let shared: Environment | undefined;

/** One environment for every rule: building one is the expensive part, evaluating is cheap. */
function environment(): Environment {
  if (shared) return shared;
  // Mixed literals such as {"command": input.command, "timeout": 30} are ordinary in input_expr.
  let env = new Environment({ homogeneousAggregateLiterals: false });
  for (const [name, type] of Object.entries(CEL_VARIABLES)) env = env.registerVariable(name, type);
  shared = env;
  return env;
}

/** Parses and type-checks once; `expect` is what the value must be (`bool` for when, `map` for input). */
export function compileCel(expression: string, expect: 'bool' | 'map'): CelCompiled {
  try {
    const parsed = environment().parse(expression);
    const checked = parsed.check();
    if (!checked.valid) return { ok: false, message: celMessage(checked.error) };
    const type = checked.type ?? 'dyn';
    const fits = type === 'dyn' || type === expect || (expect === 'map' && type.startsWith('map'));
    if (!fits) return { ok: false, message: `the expression gives ${type}, not ${expect}` };
    return { ok: true, program: parsed as unknown as CelProgram };
  } catch (err) {
    return { ok: false, message: celMessage(err) };
  }
}

/** The first line of a CEL error: the rest is a source excerpt that the lint output shows its own way. */
export function celMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}

/**
 * CEL keeps `int` and `double` apart and cel-js maps `int` to BigInt, so a JSON `5` arriving as a JS
 * number is a double and `input.count + 1` fails with "no such overload". Integral numbers become
 * BigInt here, once per evaluation, so rules are written the way CEL reads (`+ 1`, `> 3`);
 * fractional numbers stay doubles (`input.ratio + 0.5`). Pinned by cel.test.ts.
 */
export function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = toCel((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

export type FromCel = { ok: true; value: unknown } | { ok: false; message: string };

/** A CEL result back to JSON: BigInt → number (when exact), Map → object; bytes and the like are refused. */
export function fromCel(value: unknown): FromCel {
  try {
    return { ok: true, value: toJson(value) };
  } catch (err) {
    return { ok: false, message: celMessage(err) };
  }
}

function toJson(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a modified input holds a non-finite number');
    return value;
  }
  if (typeof value === 'bigint') {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error('a modified input holds an integer beyond 2^53');
    return n;
  }
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) {
      if (typeof k !== 'string') throw new Error('a modified input has a non-string key');
      out[k] = toJson(v);
    }
    return out;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJson(v);
    return out;
  }
  throw new Error(`a modified input holds a value JSON cannot carry (${typeof value})`);
}
