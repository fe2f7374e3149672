import { Environment } from '@marcbachmann/cel-js';
import { celMessage, fromCel, toCel } from '../../gate/cel.js';

/**
 * CEL for triggers. The gate's environment declares the gate's variables (tool, input, …), so triggers
 * get their own, with the gate's number and error conversions reused: `event` (the accepted event's
 * trusted facts), `payload` (the verified body, untrusted) and `source` (`{ name, type }`).
 */
const VARIABLES = { event: 'map', payload: 'dyn', source: 'map', fetched: 'dyn' } as const;

export interface TriggerContext {
  event: Record<string, unknown>;
  payload: unknown;
  source: { name: string; type: string };
  /** The authoritative object a trigger's `fetch` re-read; null before it or without one. */
  fetched?: unknown;
}

type Program = (context: Record<string, unknown>) => unknown;
export type Compiled<T> =
  | { ok: true; run: (ctx: TriggerContext) => Outcome<T> }
  | { ok: false; message: string };
export type Outcome<T> = { ok: true; value: T } | { ok: false; message: string };

let shared: Environment | undefined;

function environment(): Environment {
  if (shared) return shared;
  let env = new Environment({ homogeneousAggregateLiterals: false });
  for (const [name, type] of Object.entries(VARIABLES)) env = env.registerVariable(name, type);
  shared = env;
  return env;
}

function compile(
  expression: string,
  expect: 'bool' | 'string',
): { ok: true; program: Program } | { ok: false; message: string } {
  try {
    const parsed = environment().parse(expression);
    const checked = parsed.check();
    if (!checked.valid) return { ok: false, message: celMessage(checked.error) };
    const type = checked.type ?? 'dyn';
    if (type !== 'dyn' && type !== expect)
      return { ok: false, message: `the expression gives ${type}, not ${expect}` };
    return { ok: true, program: parsed as unknown as Program };
  } catch (err) {
    return { ok: false, message: celMessage(err) };
  }
}

function evaluate(program: Program, ctx: TriggerContext): Outcome<unknown> {
  try {
    const value = program({
      event: toCel(ctx.event),
      payload: toCel(ctx.payload),
      source: ctx.source,
      fetched: toCel(ctx.fetched ?? null),
    });
    return fromCel(value);
  } catch (err) {
    return { ok: false, message: celMessage(err) };
  }
}

/** A `when` filter: compiled once at start-up; a non-bool at run time is an error, never a silent false. */
export function compileFilter(expression: string): Compiled<boolean> {
  const c = compile(expression, 'bool');
  if (!c.ok) return c;
  return {
    ok: true,
    run(ctx) {
      const r = evaluate(c.program, ctx);
      if (!r.ok) return r;
      return typeof r.value === 'boolean'
        ? { ok: true, value: r.value }
        : { ok: false, message: 'when did not give a bool' };
    },
  };
}

/** A coalescing key: any scalar result becomes its string form; a map or list is an error. */
export function compileKey(expression: string): Compiled<string> {
  const c = compile(expression, 'string');
  if (!c.ok) return c;
  return {
    ok: true,
    run(ctx) {
      const r = evaluate(c.program, ctx);
      if (!r.ok) return r;
      const v = r.value;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        return { ok: true, value: String(v) };
      return { ok: false, message: 'the coalesce key did not give a string' };
    },
  };
}
