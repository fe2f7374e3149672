/**
 * The router, pure: which up agent with the skill gets the work, with every candidate's score so a
 * person can see why. `capability` takes the least loaded; `weighted` scores weight × success EWMA
 * over load and latency. Ties break by id, so the same state always gives the same answer (route.test.ts).
 */

export const STRATEGIES = ['capability', 'weighted'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** What the router reads of an agent (registry.ts keeps it current). */
export interface Routable {
  id: string;
  skills: ReadonlySet<string>;
  weight: number;
  /** `down` by its own heartbeat; liveness by time is judged here. */
  status: 'up' | 'down';
  /** The load it reported plus the calls Switchboard has open to it. */
  load: number;
  /** EWMA of attempt outcomes, 1 = every attempt answered. */
  successEwma: number;
  /** EWMA of attempt latency in ms; null until the first call. */
  latencyEwma: number | null;
  lastSeen: number | null;
}

export type Exclusion = 'down' | 'tried' | 'cycle';

export interface Candidate {
  id: string;
  score: number;
  load: number;
  success_rate: number;
  latency_ms: number | null;
  weight: number;
  /** Why it was not eligible; absent (or undefined) for the eligible ones. */
  excluded?: Exclusion | undefined;
  /** The wait-for cycle it would close, when excluded for one. */
  cycle?: string[] | undefined;
}

/**
 * What a decision shows a person: the best `LISTED` candidates by score (ties by id), excluded ones
 * included, best first, plus the chosen one if it ranks lower. The rest are only counted
 * (`considered`), so a decision over hundreds of agents allocates a few dozen objects, not one per agent.
 */
export const LISTED = 20;

export type RouteResult =
  | { kind: 'chosen'; agent: string; score: number; candidates: Candidate[]; considered: number }
  | { kind: 'no_skill' }
  | { kind: 'none_up'; candidates: Candidate[]; considered: number; allTried: boolean }
  | { kind: 'cycle'; cycle: string[]; candidates: Candidate[]; considered: number };

export function isUp(a: Routable, now: number, ttlMs: number): boolean {
  return a.status === 'up' && a.lastSeen !== null && now - a.lastSeen <= ttlMs;
}

/**
 * A latency EWMA of this many ms halves an agent's weighted score. Collaborations are jobs of seconds:
 * a few hundred ms between two agents should not outweigh one of them failing every fifth call.
 */
export const LATENCY_SCALE_MS = 5_000;

export function scoreOf(a: Routable, strategy: Strategy): number {
  if (strategy === 'capability') return 1 / (1 + a.load);
  const latency = a.latencyEwma ?? 0;
  return (a.weight * a.successEwma) / ((1 + a.load) * (1 + latency / LATENCY_SCALE_MS));
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const NONE: ReadonlySet<string> = new Set();

/** Whether score `s` of agent `id` ranks before `c` (higher score, then the smaller id). */
const before = (s: number, id: string, c: Candidate) => s > c.score || (s === c.score && id < c.id);

/**
 * Routes `skill` among `withSkill` (the registry's index: every agent that has it). `closesCycle`
 * says whether giving this agent the work would close a wait-for cycle, and which. One pass: the best
 * eligible agent is tracked by index and score; a Candidate object is made only for an agent that
 * enters the listed top (bench `agents`: 100 agents, p99 per 1k-window).
 */
export function route(
  withSkill: readonly Routable[],
  strategy: Strategy,
  now: number,
  ttlMs: number,
  tried: ReadonlySet<string> = NONE,
  closesCycle: (id: string) => string[] | undefined = () => undefined,
): RouteResult {
  const n = withSkill.length;
  if (n === 0) return { kind: 'no_skill' };
  const top: Candidate[] = [];
  let best = -1;
  let bestScore = 0;
  let cycle: string[] | undefined;
  let triedCount = 0;
  for (let i = 0; i < n; i++) {
    const a = withSkill[i]!;
    const score = scoreOf(a, strategy);
    let excluded: Exclusion | undefined;
    let closes: string[] | undefined;
    if (!isUp(a, now, ttlMs)) excluded = 'down';
    else if (tried.has(a.id)) {
      excluded = 'tried';
      triedCount++;
    } else {
      closes = closesCycle(a.id);
      if (closes) {
        excluded = 'cycle';
        cycle ??= closes;
      }
    }
    if (
      excluded === undefined &&
      (best < 0 || score > bestScore || (score === bestScore && a.id < withSkill[best]!.id))
    ) {
      best = i;
      bestScore = score;
    }
    if (top.length === LISTED && !before(score, a.id, top[LISTED - 1]!)) continue;
    // One shape for every candidate (the optional fields set from the start): no hidden-class changes.
    const c: Candidate = {
      id: a.id,
      score,
      load: a.load,
      success_rate: a.successEwma,
      latency_ms: a.latencyEwma,
      weight: a.weight,
      excluded,
      cycle: closes,
    };
    let at = top.length;
    while (at > 0 && before(score, a.id, top[at - 1]!)) at--;
    top.splice(at, 0, c);
    if (top.length > LISTED) top.pop();
  }
  if (best >= 0) {
    const chosen = withSkill[best]!;
    if (!top.some((c) => c.id === chosen.id))
      top.push({
        id: chosen.id,
        score: bestScore,
        load: chosen.load,
        success_rate: chosen.successEwma,
        latency_ms: chosen.latencyEwma,
        weight: chosen.weight,
        excluded: undefined,
        cycle: undefined,
      });
    return { kind: 'chosen', agent: chosen.id, score: bestScore, candidates: top, considered: n };
  }
  if (cycle) return { kind: 'cycle', cycle, candidates: top, considered: n };
  return { kind: 'none_up', candidates: top, considered: n, allTried: triedCount === n };
}

/** The listed candidates as an event shows them (route's order: best first, ties by id), rounded. */
export function ranked(candidates: readonly Candidate[]): Candidate[] {
  return candidates.map((c) => ({
    id: c.id,
    score: round(c.score),
    load: c.load,
    success_rate: round(c.success_rate),
    latency_ms: c.latency_ms === null ? null : Math.round(c.latency_ms),
    weight: c.weight,
    ...(c.excluded ? { excluded: c.excluded } : {}),
    ...(c.cycle ? { cycle: c.cycle } : {}),
  }));
}
