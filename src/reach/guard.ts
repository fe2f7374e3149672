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
  // Most results are JSON: the walk that names the path runs only for one that is not.
  return isJson(value, 0) ? undefined : describeProblem(value, 'result', 0);
}

function isJson(value: unknown, depth: number): boolean {
  if (depth > 64) return false;
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!isJson(value[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const k of Object.keys(value))
        if (!isJson((value as Record<string, unknown>)[k], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

function describeProblem(value: unknown, path: string, depth: number): string | undefined {
  if (depth > 64) return `${path} is nested deeper than 64 levels`;
  if (value === null) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON cannot carry`;
    case 'object': {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const p = describeProblem(value[i], `${path}[${i}]`, depth + 1);
          if (p) return p;
        }
        return undefined;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null)
        return `${path} is a ${(value as object).constructor?.name ?? 'non-plain object'}, not a plain JSON object`;
      for (const [k, v] of Object.entries(value)) {
        const p = describeProblem(v, `${path}.${k}`, depth + 1);
        if (p) return p;
      }
      return undefined;
    }
    default:
      return `${path} is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, which JSON cannot carry`;
  }
}
