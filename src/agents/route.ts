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

export type RouteResult =
  | { kind: 'chosen'; agent: string; candidates: Candidate[] }
  | { kind: 'no_skill' }
  | { kind: 'none_up'; candidates: Candidate[] }
  | { kind: 'cycle'; cycle: string[]; candidates: Candidate[] };

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

/**
 * Routes `skill` among `withSkill` (the registry's index: every agent that has it). `closesCycle`
 * says whether giving this agent the work would close a wait-for cycle, and which. The candidates
 * come back in the index's order with raw scores: `ranked` orders and rounds them for a person.
 */
export function route(
  withSkill: readonly Routable[],
  strategy: Strategy,
  now: number,
  ttlMs: number,
  tried: ReadonlySet<string> = NONE,
  closesCycle: (id: string) => string[] | undefined = () => undefined,
): RouteResult {
  if (withSkill.length === 0) return { kind: 'no_skill' };
  const candidates: Candidate[] = new Array(withSkill.length);
  let best: Candidate | undefined;
  let cycle: string[] | undefined;
  for (let i = 0; i < withSkill.length; i++) {
    const a = withSkill[i]!;
    // One shape for every candidate (the optional fields set from the start): no hidden-class
    // transitions in the loop that runs for every agent with the skill (bench `agents`).
    const c: Candidate = {
      id: a.id,
      score: scoreOf(a, strategy),
      load: a.load,
      success_rate: a.successEwma,
      latency_ms: a.latencyEwma,
      weight: a.weight,
      excluded: undefined,
      cycle: undefined,
    };
    candidates[i] = c;
    if (!isUp(a, now, ttlMs)) c.excluded = 'down';
    else if (tried.has(a.id)) c.excluded = 'tried';
    else {
      const closes = closesCycle(a.id);
      if (closes) {
        c.excluded = 'cycle';
        c.cycle = closes;
        cycle ??= closes;
      }
    }
    if (c.excluded) continue;
    if (!best || c.score > best.score || (c.score === best.score && c.id < best.id)) best = c;
  }
  if (best) return { kind: 'chosen', agent: best.id, candidates };
  if (cycle) return { kind: 'cycle', cycle, candidates };
  return { kind: 'none_up', candidates };
}

/** The candidates as an event shows them: best first (ties by id), scores and rates rounded. */
export function ranked(candidates: readonly Candidate[]): Candidate[] {
  return candidates
    .map((c) => ({
      id: c.id,
      score: round(c.score),
      load: c.load,
      success_rate: round(c.success_rate),
      latency_ms: c.latency_ms === null ? null : Math.round(c.latency_ms),
      weight: c.weight,
      ...(c.excluded ? { excluded: c.excluded } : {}),
      ...(c.cycle ? { cycle: c.cycle } : {}),
    }))
    .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}
