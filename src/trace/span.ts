import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/**
 * The span helpers modules call, in the core beside the log (so a module that traces depends on the
 * core, not on the telemetry module). They use only `@opentelemetry/api`; the SDK is loaded by the
 * telemetry module when `telemetry.otlp_endpoint` is set (`src/telemetry/sdk.ts`). Off, every helper is one boolean
 * test and a direct call: no span, no context, no header. docs/scale.md#opentelemetry.
 *
 * `activeSpan`, `tracer` and `failSpan` are for the core's own steps (the log's append, the relay's
 * hand-off, the key check), which trace whenever a span is active, ours or an operator's.
 */

/** The current span, when a tracer is registered and a span is running. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

export function tracer(): Tracer {
  return trace.getTracer(TRACER);
}

/** Records the error on the span and marks it failed. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? 'error' });
}

let on = false;
/** Set by `sdk.ts` once the SDK is registered, cleared when it stops. */
export function setTracing(value: boolean): void {
  on = value;
}

export function tracing(): boolean {
  return on;
}

export const TRACER = 'switchboard';

async function run<T>(span: Span, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** A step of the current trace (`gate.evaluate`); outside a trace, or off, just `fn()`. */
export function inSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T> | T): Promise<T> {
  if (!on || !activeSpan()) return Promise.resolve().then(fn);
  return tracer().startActiveSpan(name, { attributes }, (span) => run(span, fn));
}

/** Adds attributes to the current span (the hook's session and task ids on its request's span). */
export function annotate(attributes: Attributes): void {
  if (on) activeSpan()?.setAttributes(attributes);
}

/**
 * A request's root span, a child of the caller's W3C `traceparent` when it sent one (`extract`
 * ignores a malformed one: the trace starts here instead).
 */
export function serverSpan<T>(
  name: string,
  headers: Record<string, string>,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!on) return fn(undefined);
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  return context.with(parent, () =>
    tracer().startActiveSpan(name, { kind: SpanKind.SERVER, attributes }, (span) =>
      run(span, () => fn(span)),
    ),
  );
}

/** Work queued for later (a delivery row) remembers the trace it was queued in, in this process. */
const queued = new Map<string, Context>();
/** Bounded: a queue that is never worked off (a dead destination) must not grow the map. */
export const QUEUED_TRACES_MAX = 10_000;

export function rememberTrace(key: string): void {
  if (!on) return;
  const ctx = context.active();
  if (!trace.getSpan(ctx)) return;
  queued.set(key, ctx);
  if (queued.size > QUEUED_TRACES_MAX) queued.delete(queued.keys().next().value!);
}

/**
 * Queued work done later, as a span of the trace it was queued in (a new trace when this process did
 * not queue it: another replica, a restart). `done` forgets the link (the work is finished).
 */
export function resumeSpan<T>(
  key: string,
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
  done: (result: T) => boolean = () => true,
): Promise<T> {
  if (!on) return fn();
  const parent = queued.get(key) ?? ROOT_CONTEXT;
  return context.with(parent, () =>
    tracer().startActiveSpan(name, { kind: SpanKind.PRODUCER, attributes }, (span) =>
      run(span, async () => {
        const out = await fn();
        if (done(out)) queued.delete(key);
        return out;
      }),
    ),
  );
}

/** Outbound headers with the current trace's `traceparent` (and `tracestate`) added; off, as given. */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (!on || !trace.getActiveSpan()) return headers;
  const out = { ...headers };
  propagation.inject(context.active(), out);
  return out;
}
