import { celEnvironment, celMessage, fromCel, toCel } from '../../cel/index.js';

/**
 * CEL for triggers: an environment of their own (the gate's declares tool, input, …), with the shared
 * number and error conversions: `event` (the accepted event's trusted facts), `payload` (the verified
 * body, untrusted), `source` (`{ name, type }`) and `fetched`.
 *
 * `event` is a `TriggerEvent`, not a map, so that CONTRACT.md's `event == "pull_request"` works as
 * written: it compares as its name (either way round, and with `!=`), and its fields read as before
 * (`event.name`, `event.action`, `event.lineage.depth`).
 */
const VARIABLES = { event: 'TriggerEvent', payload: 'dyn', source: 'map', fetched: 'dyn' } as const;

/** The accepted event's trusted facts, as CEL reads them (fields below). */
export class TriggerEvent {
  constructor(fields: Record<string, unknown>) {
    Object.assign(this, fields);
  }
}

const EVENT_FIELDS = {
  type: 'string',
  event_id: 'string',
  /** The source's event name (`pull_request`); null when the source names none. */
  name: 'dyn',
  action: 'dyn',
  delivery_id: 'string',
  tenant_id: 'string',
  binding: 'map',
  lineage: 'map',
} as const;

const FIELD_LIST = Object.keys(EVENT_FIELDS)
  .map((f) => `event.${f}`)
  .join(', ');

/** What a type error about each variable should say to write instead (src/cel/environment.ts). */
const HINTS: Record<string, string> = {
  event: `compare it with an event name (event == "pull_request"), or read a field: ${FIELD_LIST}; for a list, event.name in ["push", "pull_request"]`,
  source: 'read source.name or source.type',
  payload: 'read a field of the body, e.g. payload.action, and guard a missing one with has(payload.action)',
  fetched: 'read a field of the re-read object, e.g. fetched.state',
};

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

const environment = celEnvironment({
  variables: VARIABLES,
  mixedLiterals: true,
  types: { TriggerEvent: { ctor: TriggerEvent as never, fields: EVENT_FIELDS } },
  operators: {
    'TriggerEvent == string': ((event: { name?: unknown }, name: string) => event.name === name) as never,
  },
  hints: HINTS,
});

/** The event's facts as a `TriggerEvent`, each field in CEL's form (ints, maps). */
function triggerEvent(fields: Record<string, unknown>): TriggerEvent {
  const converted: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) converted[k] = toCel(v);
  return new TriggerEvent(converted);
}

function evaluate(program: Program, ctx: TriggerContext): Outcome<unknown> {
  try {
    const value = program({
      event: triggerEvent(ctx.event),
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
