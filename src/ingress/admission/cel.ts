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

/** Compiles once at start-up; at run time `convert` turns the value into `T` or says why it cannot. */
function compileAs<T>(
  expression: string,
  type: 'bool' | 'string',
  convert: (v: unknown) => { ok: true; value: T } | { ok: false; message: string },
): Compiled<T> {
  const c = environment.compile<Program>(expression, type);
  if (!c.ok) return c;
  return {
    ok: true,
    run(ctx) {
      const r = evaluate(c.program, ctx);
      return r.ok ? convert(r.value) : r;
    },
  };
}

/** A `when` filter: a non-bool at run time is an error, never a silent false. */
export function compileFilter(expression: string): Compiled<boolean> {
  return compileAs(expression, 'bool', (v) =>
    typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, message: 'when did not give a bool' },
  );
}

/** A coalescing key: any scalar result becomes its string form; a map or list is an error. */
export function compileKey(expression: string): Compiled<string> {
  return compileAs(expression, 'string', (v) =>
    typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
      ? { ok: true, value: String(v) }
      : { ok: false, message: 'the coalesce key did not give a string' },
  );
}
