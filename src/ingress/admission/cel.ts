import { celEnvironment, celMessage, fromCel, toCel } from '../../cel/index.js';

/**
 * CEL for triggers: an environment of their own (the gate's declares tool, input, …), with the shared
 * number and error conversions: `event` (the accepted event's trusted facts), `payload` (the verified
 * body, untrusted), `source` (`{ name, type }`) and `fetched`.
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

const environment = celEnvironment({ variables: VARIABLES, mixedLiterals: true });

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
  const c = environment.compile<Program>(expression, 'bool');
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
  const c = environment.compile<Program>(expression, 'string');
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
