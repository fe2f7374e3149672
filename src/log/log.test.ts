import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import type { EnvelopeInput } from '../envelope/index.js';
import type { AppError } from '../errors/index.js';
import { EventLog } from './log.js';
import { verifyChain } from './verify.js';

const DIALECTS = await dialects();
const DEFAULTS = { tenant_id: 't1', environment: 'test' };

describe.each(DIALECTS)('event log on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  async function logWith(n: number): Promise<EventLog> {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    for (let i = 0; i < n; i++) {
      await log.append({
        type: 'agent.tool.requested',
        subject: { tool: `t${i}` },
        correlation_id: `c${i % 2}`,
      });
    }
    return log;
  }

  it('writes every event together with its outbox row', async () => {
    await logWith(5);
    const events = await store.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM events' });
    const outbox = await store.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM outbox' });
    expect(Number(events[0]!.n)).toBe(5);
    expect(Number(outbox[0]!.n)).toBe(5);
  });

  it('answers its head seq, its outbox depth and the relay attempts of each event, without a caller reading its tables', async () => {
    const log = await logWith(3);
    expect(await log.lastSeq()).toBe(3);
    expect(await log.outboxDepth()).toBe(3);
    const [first, second] = await log.list({ limit: 2 });
    await store.db.query({
      text: `UPDATE outbox SET status = 'dead', attempts = 25 WHERE event_id = $1`,
      values: [first!.envelope.event_id],
    });
    expect(await log.outboxDepth()).toBe(2);
    const attempts = await log.outboxAttempts([
      first!.envelope.event_id,
      second!.envelope.event_id,
      'evt_gone',
    ]);
    expect(Object.fromEntries(attempts)).toEqual({
      [first!.envelope.event_id]: 25,
      [second!.envelope.event_id]: 0,
    });
    expect((await log.outboxAttempts([])).size).toBe(0);
  });

  it('has head seq 0 while empty', async () => {
    expect(await (await logWith(0)).lastSeq()).toBe(0);
  });

  it('rolls back the event when the caller’s transaction fails, leaving no outbox row behind', async () => {
    const log = await logWith(1);
    await expect(
      store.db.tx(async (tx) => {
        await log.append({ type: 'agent.tool.requested' }, tx);
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    const outbox = await store.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM outbox' });
    expect(Number(outbox[0]!.n)).toBe(1);
    expect((await verifyChain(store.db)).ok).toBe(true);
  });

  it('writes a transaction’s appends at its end, as one write: the head read and moved once, the events visible to get() before', async () => {
    const log = await logWith(1);
    const stats = () => store.db.stats?.() ?? { commits: 0, transactions: 0, statements: 0 };
    const before = stats();
    const seen = await store.db.tx(async (tx) => {
      const a = await log.append({ type: 'agent.tool.requested', correlation_id: 'cx' }, tx);
      await log.appendMany(
        [
          { type: 'agent.tool.authorized', correlation_id: 'cx', causation_id: a.event_id },
          { type: 'agent.tool.completed', correlation_id: 'cx', causation_id: a.event_id },
        ],
        tx,
      );
      // Nothing is in the table yet, but the transaction reads its own event through the log.
      const [row] = await tx.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM events' });
      return {
        rows: Number(row!.n),
        got: (await log.get(a.event_id, tx))?.envelope.event_id,
        id: a.event_id,
      };
    });
    expect(seen.rows).toBe(1);
    expect(seen.got).toBe(seen.id);
    const after = stats();
    // SQLite: head, events, outbox, head; PostgreSQL: one chained statement, plus the COUNT either way.
    expect(after.statements - before.statements).toBe(dialect === 'sqlite' ? 5 : 2);
    const types = (await log.list({ correlationId: 'cx' })).map((e) => [e.seq, e.envelope.type]);
    expect(types).toEqual([
      [2, 'agent.tool.requested'],
      [3, 'agent.tool.authorized'],
      [4, 'agent.tool.completed'],
    ]);
    expect(await log.outboxDepth()).toBe(4);
    expect((await verifyChain(store.db)).ok).toBe(true);
  });

  it('fails the transaction when its events cannot be written at its end, keeping nothing of it', async () => {
    const log = await logWith(1);
    const [first] = await log.list({ limit: 1 });
    await expect(
      store.db.tx(async (tx) => {
        await tx.query({
          text: `INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at) VALUES ('evt_x', 'bus', 'c', 'pending', 0, 0, 0)`,
        });
        // The same event id again: refused by the events table's key when the transaction ends.
        await log.append({ type: 'agent.tool.requested', event_id: first!.envelope.event_id }, tx);
      }),
    ).rejects.toThrow();
    expect(await log.outboxDepth()).toBe(1);
    expect(await log.lastSeq()).toBe(1);
    expect((await verifyChain(store.db)).ok).toBe(true);
  });

  it('appends a batch in order with one chain, each event with its outbox row, in one statement on PostgreSQL', async () => {
    const log = await logWith(3);
    const stats = () => store.db.stats?.() ?? { commits: 0, transactions: 0, statements: 0 };
    const before = stats();
    const batch: EnvelopeInput[] = Array.from({ length: 40 }, (_, i) => ({
      type: i % 2 ? 'agent.tool.requested' : 'agent.session.started',
      correlation_id: `b${i % 3}`,
      ...(i % 5 === 0 ? { task_id: `tsk_${i}` } : {}),
      subject: { tool: `t${i}`, note: "emoji 🚀 and a quote ' and a newline\n" },
    }));
    const envelopes = await log.appendMany(batch);
    const after = stats();
    if (dialect === 'postgres') expect(after.statements - before.statements).toBe(1);
    expect(after.commits - before.commits).toBeLessThanOrEqual(1);
    const stored = await log.list({ afterSeq: 3, limit: 100 });
    expect(stored.map((e) => e.envelope.event_id)).toEqual(envelopes.map((e) => e.event_id));
    expect(stored.map((e) => e.seq)).toEqual(envelopes.map((_, i) => i + 4));
    const outbox = await store.db.query<{ event_id: string }>({
      text: 'SELECT event_id FROM outbox ORDER BY id',
    });
    expect(outbox.slice(3).map((r) => r.event_id)).toEqual(envelopes.map((e) => e.event_id));
    const chain = await verifyChain(store.db);
    expect(chain.ok).toBe(true);
    expect(await log.lastSeq()).toBe(43);
  });

  it('refuses an envelope that breaks the schema, writing nothing', async () => {
    const log = await logWith(0);
    const err = await log.append({ type: 'agent.tool.requested', tenant_id: '' }).catch((e: unknown) => e);
    expect((err as AppError).code).toBe('validation_failed');
    expect((await verifyChain(store.db)).ok).toBe(true);
  });

  it('verifies a fresh chain and reports its head', async () => {
    await logWith(12);
    const result = await verifyChain(store.db);
    expect(result).toMatchObject({ ok: true, count: 12, headSeq: 12 });
  });

  it('names the event whose body was edited in the database', async () => {
    const log = await logWith(6);
    const target = (await log.list({ limit: 10 }))[3]!;
    const edited = JSON.stringify({
      ...target.envelope,
      subject: { ...target.envelope.subject, tool: 'evil' },
    });
    await store.db.query({
      text: 'UPDATE events SET body = $1 WHERE seq = $2',
      values: [edited, target.seq],
    });
    const result = await verifyChain(store.db);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.firstBad).toMatchObject({
        seq: 4,
        eventId: target.envelope.event_id,
        problem: 'hash_mismatch',
      });
      expect(result.count).toBe(3);
    }
  });

  it('names the gap when an event was deleted', async () => {
    await logWith(6);
    await store.db.query({ text: 'DELETE FROM events WHERE seq = 2' });
    const result = await verifyChain(store.db);
    expect(!result.ok && result.firstBad).toMatchObject({ seq: 3, problem: 'gap' });
  });

  it('detects two events swapped in place', async () => {
    await logWith(4);
    const rows = await store.db.query<{
      seq: number;
      event_id: string;
      body: string;
      prev_hash: string;
      hash: string;
    }>({
      text: 'SELECT seq, event_id, body, prev_hash, hash FROM events WHERE seq IN (2, 3) ORDER BY seq',
    });
    const [a, b] = rows as [(typeof rows)[0], (typeof rows)[0]];
    await store.db.tx(async (tx) => {
      await tx.query({ text: 'DELETE FROM events WHERE seq IN (2, 3)' });
      for (const [seq, r] of [
        [2, b],
        [3, a],
      ] as const) {
        await tx.query({
          text: `INSERT INTO events (seq, event_id, type, occurred_at, tenant_id, correlation_id, body, prev_hash, hash, recorded_at)
                 VALUES ($1, $2, 'agent.tool.requested', 'x', 't1', 'c', $3, $4, $5, 0)`,
          values: [seq, r.event_id, r.body, r.prev_hash, r.hash],
        });
      }
    });
    const result = await verifyChain(store.db);
    expect(!result.ok && result.firstBad).toMatchObject({ seq: 2, problem: 'prev_hash_mismatch' });
  });

  it('detects a truncated tail through the chain head', async () => {
    await logWith(5);
    await store.db.query({ text: 'DELETE FROM events WHERE seq = 5' });
    const result = await verifyChain(store.db);
    expect(!result.ok && result.firstBad).toMatchObject({ seq: 5, problem: 'head_mismatch' });
  });

  it('filters events by correlation, type prefix and position', async () => {
    const log = await logWith(6);
    await log.append({ type: 'agent.session.started', correlation_id: 'c9' });
    expect((await log.list({ correlationId: 'c0' })).length).toBe(3);
    expect((await log.list({ type: 'agent.session.*' })).map((e) => e.envelope.correlation_id)).toEqual([
      'c9',
    ]);
    expect((await log.list({ afterSeq: 5 })).map((e) => e.seq)).toEqual([6, 7]);
  });

  it('keeps one unbroken chain when many appends race', async () => {
    store = await freshStore(dialect);
    const a = new EventLog(store.db, DEFAULTS);
    // PostgreSQL: a second pool, as a second replica would have. SQLite: one connection per process
    // (better-sqlite3 blocks the thread on a lock held by the same thread), so the race is within it.
    const second = dialect === 'postgres' ? await store.reopen() : store.db;
    const b = new EventLog(second, DEFAULTS);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).append({ type: 'agent.tool.requested' })),
    );
    if (second !== store.db) await second.close();
    expect(await verifyChain(store.db)).toMatchObject({ ok: true, count: 40 });
  });
});
