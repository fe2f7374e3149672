import { AppError } from '../errors/index.js';
import { agentNode, WaitGraph } from './graph.js';
import { type Routable, type RouteResult, route, type Strategy } from './route.js';
import type * as q from './sql.js';

/**
 * The wait-for side of collaborations (docs/agents.md, "No deadlocks"): the graph as the store or
 * this process holds the open attempts, the routing decision that leaves out a candidate which would
 * close a cycle, and the error that names one.
 */

/**
 * A wait row outlives its attempt's deadline by this much before it stops counting: the attempt's
 * own end (CancelTask, the receipt's commit) deletes it well within, a dead replica's expire.
 */
export const WAIT_GRACE_MS = 30_000;

/** The wait-for graph as the store holds it (every replica's open attempts), and who serves how deep. */
export interface SharedWaits {
  graph: WaitGraph;
  /** Per agent: the deepest collaboration it is serving (what it asks is one deeper). */
  serving: Map<string, number>;
}

export function sharedWaits(rows: readonly q.WaitRow[]): SharedWaits {
  const graph = new WaitGraph();
  const serving = new Map<string, number>();
  for (const r of rows) {
    graph.add(r.waiter, agentNode(r.agent));
    serving.set(r.agent, Math.max(serving.get(r.agent) ?? 0, Number(r.depth)));
  }
  return { graph, serving };
}

/** One routing decision: the router over the skill's agents, a candidate excluded when it would close a cycle. */
export function decide(
  graph: WaitGraph,
  withSkill: readonly Routable[],
  a: { waiter: string; req: { strategy: Strategy } },
  now: number,
  ttlMs: number,
  tried?: ReadonlySet<string>,
): RouteResult {
  const reaching = graph.reaching(a.waiter);
  return route(withSkill, a.req.strategy, now, ttlMs, tried, (id) => {
    const node = agentNode(id);
    if (node !== a.waiter && !reaching.has(node)) return undefined;
    return graph.cycleIf(a.waiter, node);
  });
}

export function cycleError(cycle: readonly string[]): AppError {
  return new AppError(
    'COLLABORATION_CYCLE',
    `refused: ${cycle.join(' → ')} would wait on itself; answer the request you serve instead`,
    { cycle },
  );
}
