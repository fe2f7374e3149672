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

/** Only the five JSON types (seed §6.2): a Date, a Map or a class instance from a tool is a bug in it. */
export function jsonProblem(value: unknown, path = 'result', depth = 0): string | undefined {
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
          const p = jsonProblem(value[i], `${path}[${i}]`, depth + 1);
          if (p) return p;
        }
        return undefined;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null)
        return `${path} is a ${(value as object).constructor?.name ?? 'non-plain object'}, not a plain JSON object`;
      for (const [k, v] of Object.entries(value)) {
        const p = jsonProblem(v, `${path}.${k}`, depth + 1);
        if (p) return p;
      }
      return undefined;
    }
    default:
      return `${path} is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}, which JSON cannot carry`;
  }
}
