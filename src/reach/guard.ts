/**
 * Per-tool concurrency (seed §6.3): a model in a retry loop must not be able to flood a backend. A
 * call beyond the tool's limit is refused at once (CONCURRENCY_LIMIT) rather than queued, so a flood
 * never piles up waiting work either. Counted per gateway process: with N replicas a backend sees at
 * most N × the limit (docs/reach.md says so).
 */
export class Concurrency {
  private readonly inFlight = new Map<string, number>();

  /** A release function when a slot was free; undefined when the tool is at its limit. */
  tryAcquire(tool: string, limit: number): (() => void) | undefined {
    const n = this.inFlight.get(tool) ?? 0;
    if (n >= limit) return undefined;
    this.inFlight.set(tool, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(tool) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(tool);
      else this.inFlight.set(tool, left);
    };
  }

  running(tool: string): number {
    return this.inFlight.get(tool) ?? 0;
  }
}

/** Why a run's signal was aborted: the engine tells a timeout from a stop by the reason's type. */
export class DeadlineReached extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'DeadlineReached';
  }
}

export class GatewayStopping extends Error {
  constructor() {
    super('the gateway is stopping');
    this.name = 'GatewayStopping';
  }
}

const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Runs `fn` when `signal` aborts, as `addEventListener('abort', fn, { once: true })` would (never, when
 * it has already aborted), with one listener per signal however many runs wait on it; returns the undo.
 * Every touch waits on the engine's stopping signal; a Set's add and delete per run cost less than
 * EventTarget's.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) return () => {};
  let fns = waiting.get(signal);
  if (!fns) {
    const all = new Set<() => void>();
    fns = all;
    waiting.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        const now = [...all];
        all.clear();
        for (const f of now) f();
      },
      { once: true },
    );
  }
  const mine = fns;
  mine.add(fn);
  return () => void mine.delete(fn);
}

/** Only the five JSON types (seed §6.2): a Date, a Map or a class instance from a tool is a bug in it. */
export function jsonProblem(value: unknown): string | undefined {
  const p = problemIn(value, 0);
  return p && `result${p.at} ${p.why}`;
}

/**
 * The first place `value` is not JSON: where, below it (`[3].name`), and why. The path is put together
 * on the way back from a problem, so the usual result, all JSON, builds no string at all.
 */
function problemIn(value: unknown, depth: number): { at: string; why: string } | undefined {
  if (depth > 64) return { at: '', why: 'is nested deeper than 64 levels' };
  if (value === null) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : { at: '', why: `is ${value}, which JSON cannot carry` };
    case 'object': {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const p = problemIn(value[i], depth + 1);
          if (p) return { at: `[${i}]${p.at}`, why: p.why };
        }
        return undefined;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null)
        return {
          at: '',
          why: `is a ${(value as object).constructor?.name ?? 'non-plain object'}, not a plain JSON object`,
        };
      for (const k of Object.keys(value)) {
        const p = problemIn((value as Record<string, unknown>)[k], depth + 1);
        if (p) return { at: `.${k}${p.at}`, why: p.why };
      }
      return undefined;
    }
    default:
      return {
        at: '',
        why: `is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, which JSON cannot carry`,
      };
  }
}
