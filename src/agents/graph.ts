/**
 * The wait-for graph of open collaborations: an edge `waiter → agent:<id>` while the waiter (a task,
 * an agent, a key) waits on that agent's answer. Asking for work that would add an edge whose head
 * already reaches its tail closes a cycle: two agents would wait on each other until their timeouts,
 * so the request is refused at once, naming the cycle (graph.test.ts).
 */

export const agentNode = (id: string) => `agent:${id}`;

const NOTHING: ReadonlySet<string> = new Set();

export class WaitGraph {
  /** from → to → how many open collaborations make the edge. */
  private readonly edges = new Map<string, Map<string, number>>();
  /** The same edges reversed: to → from. */
  private readonly into = new Map<string, Set<string>>();

  add(from: string, to: string): void {
    const out = this.edges.get(from) ?? new Map<string, number>();
    this.edges.set(from, out);
    out.set(to, (out.get(to) ?? 0) + 1);
    const back = this.into.get(to) ?? new Set<string>();
    this.into.set(to, back);
    back.add(from);
  }

  remove(from: string, to: string): void {
    const out = this.edges.get(from);
    const n = out?.get(to);
    if (!out || n === undefined) return;
    if (n > 1) {
      out.set(to, n - 1);
      return;
    }
    out.delete(to);
    if (out.size === 0) this.edges.delete(from);
    const back = this.into.get(to);
    back?.delete(from);
    if (back?.size === 0) this.into.delete(to);
  }

  /**
   * Every node from which `node` can be reached (itself included once anything waits on it): an edge
   * `node → x` closes a cycle exactly when `x` is among them. One walk per routing decision, instead
   * of one per candidate (bench `agents`).
   */
  reaching(node: string): ReadonlySet<string> {
    if (!this.into.has(node)) return NOTHING;
    const seen = new Set<string>([node]);
    const queue = [node];
    for (let i = 0; i < queue.length; i++)
      for (const prev of this.into.get(queue[i]!) ?? NOTHING) {
        if (seen.has(prev)) continue;
        seen.add(prev);
        queue.push(prev);
      }
    return seen;
  }

  /** How many edges leave `from` (its open collaborations: the fan-out). */
  outDegree(from: string): number {
    let n = 0;
    for (const c of this.edges.get(from)?.values() ?? []) n += c;
    return n;
  }

  /**
   * The cycle `from → to` would close: the path `from, to, …, from`, or undefined when `to` does not
   * reach `from` (a self-edge is a cycle of one).
   */
  cycleIf(from: string, to: string): string[] | undefined {
    if (from === to) return [from, to];
    const back = new Map<string, string>();
    const queue = [to];
    const seen = new Set([to]);
    while (queue.length > 0) {
      const n = queue.shift()!;
      for (const next of this.edges.get(n)?.keys() ?? []) {
        if (seen.has(next)) continue;
        back.set(next, n);
        if (next === from) {
          const walk = [from];
          for (let at = from; at !== to; ) {
            at = back.get(at)!;
            walk.push(at);
          }
          return [from, ...walk.reverse()];
        }
        seen.add(next);
        queue.push(next);
      }
    }
    return undefined;
  }
}
