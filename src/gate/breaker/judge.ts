import type { Limits } from './config.js';

/** What a scope did inside the window. */
export interface Figures {
  decisions: number;
  denied: number;
  side_effects: number;
  delivery_failures: number;
}

export type Metric = 'side_effects' | 'denied_ratio' | 'delivery_failures';

/** The threshold crossed, with what was seen: the first of side effects, denied ratio, failures. */
export interface Crossed {
  metric: Metric;
  observed: number;
  limit: number;
}

/** Every threshold is "more than": at the limit nothing trips. Pure; `judge.test.ts` pins it. */
export function judge(f: Figures, l: Limits): Crossed | undefined {
  if (l.side_effects !== undefined && f.side_effects > l.side_effects)
    return { metric: 'side_effects', observed: f.side_effects, limit: l.side_effects };
  if (l.denied_ratio !== undefined && f.decisions >= l.min_decisions) {
    const ratio = f.denied / f.decisions;
    if (ratio > l.denied_ratio)
      return { metric: 'denied_ratio', observed: round(ratio), limit: l.denied_ratio };
  }
  if (l.delivery_failures !== undefined && f.delivery_failures > l.delivery_failures)
    return { metric: 'delivery_failures', observed: f.delivery_failures, limit: l.delivery_failures };
  return undefined;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** The counts by kind (`breaker_hits.kind`) as figures. */
export function figuresOf(counts: ReadonlyMap<string, number>): Figures {
  const n = (k: string) => counts.get(k) ?? 0;
  return {
    decisions: n('side_effect') + n('authorized') + n('denied') + n('deferred'),
    denied: n('denied'),
    side_effects: n('side_effect'),
    delivery_failures: n('delivery_failure'),
  };
}

/** One line a person reads: `31 side effects in 60 s (limit 30)`. */
export function describeTrip(c: Crossed, f: Figures, windowSeconds: number): string {
  const window = `in ${windowSeconds} s`;
  switch (c.metric) {
    case 'side_effects':
      return `${c.observed} side effects ${window} (limit ${c.limit})`;
    case 'denied_ratio':
      return `${f.denied} of ${f.decisions} decisions denied ${window} (${pct(c.observed)}, limit ${pct(c.limit)})`;
    case 'delivery_failures':
      return `${c.observed} delivery failures ${window} (limit ${c.limit})`;
  }
}

const pct = (x: number) => `${Math.round(x * 1000) / 10} %`;
