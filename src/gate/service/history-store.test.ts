import { afterEach, describe, expect, it } from 'vitest';
import { HISTORY_LIMIT } from '../history.js';
import type { HistoryEntry } from '../types.js';
import { HistoryStore } from './history-store.js';
import { type GateHarness, gateHarness } from './testing.js';
import { dialects } from '../../store/testing.js';
import { tasksPort } from '../../tasks/port.js';

const entry = (i: number, over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  kind: 'shell',
  tool: 'Bash',
  decision: 'allow',
  at: new Date(Date.parse('2026-06-01T10:00:00Z') + i * 1000).toISOString(),
  untrusted: false,
  paths: [],
  host: '',
  ...over,
});

describe.each(await dialects())('the history store on %s', (dialect) => {
  let h: GateHarness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it('keeps the newest 200 per session in memory and in the table, oldest first', async () => {
    h = await gateHarness(dialect);
    const db = h.t.services.db;
    const store = new HistoryStore(db);
    for (let i = 0; i < 260; i++) {
      await db.tx((tx) => store.append(tx, 's:a', `evt_${String(i).padStart(4, '0')}`, entry(i)));
    }
    const live = await store.get('s:a');
    expect(live.window.entries).toHaveLength(HISTORY_LIMIT);
    expect(live.window.entries[0]!.at).toBe(entry(60).at);
    expect(live.window.entries.at(-1)!.at).toBe(entry(259).at);
    expect(live.window.kinds.get('shell')).toBe(BigInt(HISTORY_LIMIT));
    const [count] = await db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM gate_history' });
    expect(Number(count?.n)).toBeLessThanOrEqual(HISTORY_LIMIT + 50);
    // A fresh store (a restart) reads the same list back.
    const again = await new HistoryStore(db).get('s:a');
    expect(again.window.entries).toEqual(live.window.entries);
    expect(again.untrustedSince).toBeNull();
  });

  it('marks a session untrusted for good, and a rolled-back decision leaves nothing', async () => {
    h = await gateHarness(dialect);
    const db = h.t.services.db;
    const store = new HistoryStore(db);
    await expect(
      db.tx(async (tx) => {
        await store.append(tx, 's:b', 'evt_x', entry(0, { kind: 'web.fetch', untrusted: true }));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await store.get('s:b')).window.entries).toEqual([]);
    expect((await new HistoryStore(db).get('s:b')).untrustedSince).toBeNull();
    await db.tx((tx) => store.append(tx, 's:b', 'evt_y', entry(1, { kind: 'web.fetch', untrusted: true })));
    expect((await store.get('s:b')).untrustedSince).toBe(Date.parse(entry(1).at));
    await store.markUntrusted('s:c', 5, 'a2a');
    const fresh = new HistoryStore(db);
    expect((await fresh.get('s:b')).untrustedSince).toBe(Date.parse(entry(1).at));
    expect((await fresh.get('s:c')).untrustedSince).toBe(5);
    // What the shadow run reads: only what was there before the time asked.
    expect(await fresh.read('s:b', Date.parse(entry(1).at))).toEqual({ entries: [], untrustedSince: null });
  });

  it('reads session.untrusted from a task launched with a webhook payload, and from an intent marked untrusted', async () => {
    const rules = [{ id: 'tainted', when: 'session.untrusted', decision: 'deny', reason_code: 'TAINTED' }];
    h = await gateHarness(dialect, { config: { rules } });
    const gate = h.gate.service()!;
    const principal = { name: 'bot', role: 'agent' as const };
    const ls = { tool: 'Bash', input: { command: 'ls' }, kind: 'shell' as const, args: { command: 'ls' } };
    const task = h.taskKey().task_id;
    expect((await gate.evaluate({ ...ls, task_id: task }, { principal })).decision).toBe('allow');
    const tasks = h.t.port(tasksPort);
    h.t.provide(tasksPort, {
      ...tasks,
      get: async (id: string) => {
        const view = await tasks.get(id);
        return view ? { ...view, untrusted_input: true } : undefined;
      },
    });
    expect((await gate.evaluate({ ...ls, task_id: task }, { principal })).reason_code).toBe('TAINTED');
    // A reach tool declared untrusted taints its session: the next intent sees it.
    const s = { session_id: 'reach-1' };
    expect((await gate.evaluate({ ...ls, ...s, untrusted: true }, { principal })).decision).toBe('allow');
    expect((await gate.evaluate({ ...ls, ...s }, { principal })).reason_code).toBe('TAINTED');
    await gate.markUntrusted({ session_id: 'a2a-1' }, 'a2a');
    expect((await gate.evaluate({ ...ls, session_id: 'a2a-1' }, { principal })).reason_code).toBe('TAINTED');
  });
});
