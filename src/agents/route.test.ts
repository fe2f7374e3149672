import { describe, expect, it } from 'vitest';
import { WaitGraph } from './graph.js';
import { LISTED, type Routable, ranked, route } from './route.js';

const NOW = 1_000_000;
const TTL = 30_000;
const agent = (id: string, over: Partial<Routable> = {}): Routable => ({
  id,
  skills: new Set(['analyze']),
  weight: 1,
  status: 'up',
  load: 0,
  successEwma: 1,
  latencyEwma: null,
  lastSeen: NOW,
  ...over,
});

describe('the router', () => {
  it('breaks ties by id, so the same state always gives the same agent', () => {
    const r = route([agent('b'), agent('a'), agent('c')], 'capability', NOW, TTL);
    expect(r).toMatchObject({ kind: 'chosen', agent: 'a' });
    if (r.kind === 'chosen') expect(ranked(r.candidates).map((c) => c.id)).toEqual(['a', 'b', 'c']);
  });

  it('capability routing takes the least loaded up agent', () => {
    const r = route([agent('a', { load: 2 }), agent('b', { load: 1 })], 'capability', NOW, TTL);
    expect(r).toMatchObject({ kind: 'chosen', agent: 'b' });
  });

  it('weighted routing scores weight × success over load and latency', () => {
    const agents = [
      agent('busy', { load: 3 }),
      agent('flaky', { successEwma: 0.5 }),
      agent('heavy', { weight: 2, load: 1 }),
      agent('good'),
    ];
    const r = route(agents, 'weighted', NOW, TTL);
    // good 1, heavy 2/2 = 1 (tie, by id), flaky 0.5, busy 0.25
    expect(r.kind === 'chosen' && ranked(r.candidates).map((c) => [c.id, c.score])).toEqual([
      ['good', 1],
      ['heavy', 1],
      ['flaky', 0.5],
      ['busy', 0.25],
    ]);
  });

  it('gives no work to an agent past the TTL or that said it is down, and says which', () => {
    const r = route(
      [
        agent('old', { lastSeen: NOW - TTL - 1 }),
        agent('draining', { status: 'down' }),
        agent('never', { lastSeen: null }),
      ],
      'weighted',
      NOW,
      TTL,
    );
    expect(r.kind).toBe('none_up');
    if (r.kind === 'none_up') expect(r.candidates.every((c) => c.excluded === 'down')).toBe(true);
    expect(route([], 'weighted', NOW, TTL).kind).toBe('no_skill');
  });

  it('skips the agents already tried (the fallback) and those that would close a cycle', () => {
    const r = route([agent('a'), agent('b')], 'capability', NOW, TTL, new Set(['a']), (id) =>
      id === 'b' ? ['agent:x', 'agent:b', 'agent:x'] : undefined,
    );
    expect(r).toMatchObject({ kind: 'cycle', cycle: ['agent:x', 'agent:b', 'agent:x'] });
  });
  it('lists only the best candidates of many, best first, and the chosen one even when it ranks lower', () => {
    const many = Array.from({ length: 100 }, (_, i) =>
      agent(`a${String(i).padStart(3, '0')}`, { load: i % 10, status: i < 30 ? 'down' : 'up' }),
    );
    const r = route(many, 'capability', NOW, TTL);
    expect(r).toMatchObject({ kind: 'chosen', agent: 'a030', considered: 100 });
    if (r.kind !== 'chosen') return;
    // 30 down agents with load 0..9 outrank a030 (load 0) only on id order among load 0: a000, a010, a020.
    expect(r.candidates.slice(0, 4).map((c) => c.id)).toEqual(['a000', 'a010', 'a020', 'a030']);
    expect(r.candidates).toHaveLength(LISTED);
    const drained = many.map((a, i) => (i < 99 ? { ...a, status: 'down' as const } : a));
    const last = route(drained, 'capability', NOW, TTL);
    expect(last.kind === 'chosen' && last.candidates.map((c) => c.id)).toContain('a099');
    expect(last.kind === 'chosen' && last.candidates).toHaveLength(LISTED + 1);
  });
});

describe('the wait-for graph', () => {
  it('finds the cycle an edge would close, through others, and forgets edges as collaborations end', () => {
    const g = new WaitGraph();
    g.add('agent:a', 'agent:b');
    g.add('agent:b', 'agent:c');
    expect(g.cycleIf('agent:c', 'agent:a')).toEqual(['agent:c', 'agent:a', 'agent:b', 'agent:c']);
    expect(g.cycleIf('agent:a', 'agent:c')).toBeUndefined();
    expect(g.cycleIf('agent:a', 'agent:a')).toEqual(['agent:a', 'agent:a']);
    g.add('agent:a', 'agent:b');
    g.remove('agent:a', 'agent:b');
    expect(g.outDegree('agent:a')).toBe(1);
    g.remove('agent:a', 'agent:b');
    expect(g.cycleIf('agent:c', 'agent:a')).toBeUndefined();
    expect(g.outDegree('agent:a')).toBe(0);
  });
});
