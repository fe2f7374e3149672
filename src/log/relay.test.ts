import { afterEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import type { Envelope } from '../envelope/index.js';
import { once } from './inbox.js';
import { BUS_TOPIC, EventLog } from './log.js';
import { Relay } from './relay.js';

const DIALECTS = await dialects();
const DEFAULTS = { tenant_id: 't1', environment: 'test' };

describe.each(DIALECTS)('outbox relay on %s', (dialect) => {
  let store: TestStore;
  const extra: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const d of extra.splice(0)) await d.close();
    await store?.cleanup();
  });

  it('hands every event to the subscribers that accept its type, then clears the outbox', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const relay = new Relay(store.db, log);
    const seen: string[] = [];
    relay.subscribe({
      name: 'tools',
      accepts: (t) => t.startsWith('agent.tool.'),
      handle: async (e) => void seen.push(e.type),
    });
    await log.append({ type: 'agent.tool.requested' });
    await log.append({ type: 'agent.session.started' });
    await relay.drain();
    expect(seen).toEqual(['agent.tool.requested']);
    expect((await store.db.query({ text: 'SELECT id FROM outbox' })).length).toBe(0);
  });

  it('leaves the inbox to a subscriber that owns it: no relay check or mark, its own once() de-duplicates', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const relay = new Relay(store.db, log);
    const effects: string[] = [];
    let calls = 0;
    relay.subscribe({
      name: 'owner',
      accepts: () => true,
      ownsInbox: true,
      handle: async (e) => {
        calls++;
        await once(store.db, 'owner.effects', e.event_id, async () => void effects.push(e.event_id));
      },
    });
    const e = await log.append({ type: 'agent.tool.requested' });
    await relay.drain();
    // Redelivered (a crash after the effect, before the outbox row was finished): the handler runs
    // again, and its own inbox keeps the effect single.
    await store.db.query({
      text: 'INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at) VALUES ($1, $2, $3, $4, 0, 0, 0)',
      values: [e.event_id, BUS_TOPIC, e.correlation_id, 'pending'],
    });
    await relay.drain();
    expect(calls).toBe(2);
    expect(effects).toEqual([e.event_id]);
    const marks = await store.db.query<{ consumer: string }>({ text: 'SELECT consumer FROM inbox' });
    expect(marks.map((m) => m.consumer)).toEqual(['owner.effects']);
  });

  it('keeps the order within a correlation id while a failing event is retried', async () => {
    store = await freshStore(dialect);
    let clock = 1_000_000;
    const log = new EventLog(store.db, DEFAULTS, () => clock);
    const relay = new Relay(store.db, log, { now: () => clock });
    const seen: string[] = [];
    let failOnce = true;
    relay.subscribe({
      name: 'ordered',
      accepts: () => true,
      handle: async (e: Envelope) => {
        const tool = e.subject.tool!;
        if (tool === 'a1' && failOnce) {
          failOnce = false;
          throw new Error('transient');
        }
        seen.push(tool);
      },
    });
    for (const tool of ['a1', 'a2', 'a3'])
      await log.append({ type: 'agent.tool.requested', correlation_id: 'A', subject: { tool } });
    await log.append({ type: 'agent.tool.requested', correlation_id: 'B', subject: { tool: 'b1' } });
    await relay.drain();
    // a1 failed and waits for its backoff; a2 and a3 must wait behind it, b1 need not.
    expect(seen).toEqual(['b1']);
    clock += 60_000;
    await relay.drain();
    expect(seen).toEqual(['b1', 'a1', 'a2', 'a3']);
  });

  it('does not run a subscriber again for an event it already processed', async () => {
    store = await freshStore(dialect);
    let clock = 1_000_000;
    const log = new EventLog(store.db, DEFAULTS, () => clock);
    const relay = new Relay(store.db, log, { now: () => clock });
    const counts = { good: 0, flaky: 0 };
    let flaky = true;
    relay.subscribe({ name: 'good', accepts: () => true, handle: async () => void counts.good++ });
    relay.subscribe({
      name: 'flaky',
      accepts: () => true,
      handle: async () => {
        counts.flaky++;
        if (flaky) {
          flaky = false;
          throw new Error('once');
        }
      },
    });
    await log.append({ type: 'agent.tool.requested' });
    await relay.drain();
    clock += 60_000;
    await relay.drain();
    expect(counts).toEqual({ good: 1, flaky: 2 });
  });

  it('finishes a correlation chain of events no subscriber takes in one claim, in order around the one it takes', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const relay = new Relay(store.db, log);
    const seen: string[] = [];
    relay.subscribe({
      name: 'tools',
      accepts: (t) => t === 'agent.tool.requested',
      handle: async (e) => {
        // Handed out before the later event of its correlation is finished.
        const rest = await store.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM outbox' });
        seen.push(`${e.type}:${Number(rest[0]?.n)}`);
      },
    });
    for (const type of [
      'agent.session.started',
      'agent.session.started',
      'agent.tool.requested',
      'agent.session.started',
    ] as const)
      await log.append({ type, correlation_id: 'c1' });
    expect(await relay.runOnce()).toBe(3); // two finished in the claim, one handed out
    expect(seen).toEqual(['agent.tool.requested:2']);
    await relay.drain();
    expect((await store.db.query({ text: 'SELECT id FROM outbox' })).length).toBe(0);
  });

  it('reclaims a row whose worker died holding the lease', async () => {
    store = await freshStore(dialect);
    let clock = 5_000_000;
    const log = new EventLog(store.db, DEFAULTS, () => clock);
    await log.append({ type: 'agent.tool.requested' });
    await store.db.query({
      text: `UPDATE outbox SET status = 'claimed', lease_until = $1`,
      values: [clock + 30_000],
    });
    const relay = new Relay(store.db, log, { now: () => clock });
    const seen: string[] = [];
    relay.subscribe({ name: 's', accepts: () => true, handle: async (e) => void seen.push(e.event_id) });
    await relay.drain();
    expect(seen).toEqual([]);
    clock += 31_000;
    await relay.drain();
    expect(seen.length).toBe(1);
  });

  it('releases a queued row whose lease runs out before its turn, and hands it out in order at the next claim', async () => {
    store = await freshStore(dialect);
    let clock = 7_000_000;
    const log = new EventLog(store.db, DEFAULTS, () => clock);
    const relay = new Relay(store.db, log, { now: () => clock, pipeline: true, leaseMs: 30_000 });
    const seen: string[] = [];
    relay.subscribe({
      name: 'slow',
      accepts: () => true,
      handle: async (e) => {
        seen.push(String(e.subject.action));
        // The first one is slow: the rows claimed behind it have less than a third of their lease left.
        if (e.subject.action === '0') clock += 25_000;
      },
    });
    for (let n = 0; n < 3; n++)
      await log.append({
        type: 'agent.tool.requested',
        correlation_id: 'c1',
        subject: { action: String(n) },
      });
    await relay.runOnce();
    await relay.drain();
    expect(seen).toEqual(['0', '1', '2']);
    expect(relay.stats().claimedRows).toBe(5); // 1 and 2 went back and were claimed again
    expect((await store.db.query({ text: 'SELECT id FROM outbox' })).length).toBe(0);
  });

  it('claims no more while a full set of claimed rows waits for a concurrency slot', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const relay = new Relay(store.db, log, { pipeline: true, concurrency: 1, batchSize: 2 });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    relay.subscribe({
      name: 'slow',
      accepts: () => true,
      handle: async (e) => {
        await gate;
        seen.push(e.correlation_id);
      },
    });
    for (let n = 0; n < 6; n++) await log.append({ type: 'agent.tool.requested', correlation_id: `c${n}` });
    await relay.runOnce(); // two heads: one runs, one waits for the only slot
    const next = relay.runOnce();
    await new Promise((r) => setTimeout(r, 100));
    expect(relay.stats().claimedRows).toBe(2);
    release();
    await next;
    await relay.drain();
    expect(seen.sort()).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
  });

  it('keeps a topic of its own: its failing subscriber holds up neither the bus nor its other correlations', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const bus = new Relay(store.db, log);
    const side = new Relay(store.db, log, { topic: 'side', maxAttempts: Number.POSITIVE_INFINITY });
    const onBus: string[] = [];
    const onSide: string[] = [];
    let sideUp = false;
    bus.subscribe({
      name: 'forward',
      accepts: () => true,
      ownsInbox: true,
      handle: async (e) => {
        onBus.push(e.event_id);
        await log.enqueue([e], 'side');
      },
    });
    side.subscribe({
      name: 'peer',
      accepts: () => true,
      ownsInbox: true,
      handle: async (e) => {
        if (!sideUp && e.correlation_id === 'down') throw new Error('peer unreachable');
        onSide.push(e.event_id);
      },
    });
    const down = [await log.append({ type: 'agent.tool.requested', correlation_id: 'down' })];
    down.push(await log.append({ type: 'agent.tool.requested', correlation_id: 'down' }));
    const other = await log.append({ type: 'agent.tool.requested', correlation_id: 'other' });
    await bus.drain();
    await side.drain();
    // The bus handled all three; the side topic went on with the other correlation only.
    expect(onBus.filter((id) => id !== other.event_id)).toEqual(down.map((e) => e.event_id));
    expect(onBus).toContain(other.event_id);
    expect(onSide).toEqual([other.event_id]);
    sideUp = true;
    await store.db.query({ text: "UPDATE outbox SET available_at = 0 WHERE topic = 'side'" });
    await side.drain();
    expect(onSide).toEqual([other, ...down].map((e) => e.event_id));
    expect(await log.outboxDepth()).toBe(0);
  });

  it('runs a database effect exactly once through the inbox', async () => {
    store = await freshStore(dialect);
    let runs = 0;
    for (let i = 0; i < 3; i++) {
      await once(store.db, 'projector', 'evt_same', async () => {
        runs++;
      });
    }
    expect(runs).toBe(1);
  });

  it.runIf(dialect === 'postgres')(
    'shares the outbox between two relays without handing an event to both',
    async () => {
      store = await freshStore(dialect);
      const log = new EventLog(store.db, DEFAULTS);
      for (let i = 0; i < 200; i++)
        await log.append({ type: 'agent.tool.requested', correlation_id: `c${i % 50}` });
      const other = await store.reopen();
      extra.push(other);
      const seen = new Map<string, number>();
      const make = (db: typeof store.db) => {
        const r = new Relay(db, new EventLog(db, DEFAULTS), { batchSize: 10 });
        r.subscribe({
          name: 'count',
          accepts: () => true,
          handle: async (e) => {
            seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
            await new Promise((res) => setTimeout(res, 1));
          },
        });
        return r;
      };
      await Promise.all([make(store.db).drain(), make(other).drain()]);
      expect(seen.size).toBe(200);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
    },
  );
});
