import { afterEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../envelope/index.js';
import { freshStore, type TestStore } from '../store/testing.js';
import { EventLog } from './log.js';
import { Relay, type RelayLoop, type RelayOptions, type Subscriber } from './relay.js';

const DEFAULTS = { tenant_id: 't1', environment: 'test' };

/** Records each event's label in `seen`; the first handling of the event labelled `fails` throws. */
function failingOnce(fails: string, label: (e: Envelope) => string, seen: string[]): Subscriber {
  let failed = false;
  return {
    name: 'ordered',
    accepts: () => true,
    handle: async (e) => {
      const l = label(e);
      if (l === fails && !failed) {
        failed = true;
        seen.push(`${l} failed`);
        throw new Error('first try fails');
      }
      seen.push(l);
    },
  };
}

/** The kernel's worker in miniature (the log may not import the kernel): one tick at a time. */
function runner(): NonNullable<RelayOptions['run']> {
  return (loop: RelayLoop) => {
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      void loop
        .tick()
        .catch(() => undefined)
        .finally(() => {
          busy = false;
        });
    };
    const timer = setInterval(tick, loop.intervalMs);
    if (loop.immediate) tick();
    return {
      wake: tick,
      async stop() {
        clearInterval(timer);
        while (busy) await new Promise((r) => setTimeout(r, 5));
      },
    };
  };
}

async function until(what: string, fn: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const openRows = async (store: TestStore) =>
  Number((await store.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM outbox' }))[0]!.n);

// The app's bus relay is pipelined; a relay run without `pipeline` must hand off the same way.
describe.each([true, false])('the in-process hand-off on SQLite (pipelined: %s)', (pipeline) => {
  let store: TestStore;
  let relay: Relay | undefined;
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await store?.cleanup();
  });

  it('hands the events of a commit to the subscribers right after it, without a claim transaction, and acknowledges them in a batch', async () => {
    store = await freshStore('sqlite');
    const log = new EventLog(store.db, DEFAULTS);
    relay = new Relay(store.db, log, { pipeline, run: runner(), idleMs: 60_000 });
    const seen: string[] = [];
    relay.subscribe({
      name: 'tools',
      accepts: (t) => t === 'agent.tool.requested',
      handle: async (e) => void seen.push(e.event_id),
    });
    relay.start();
    await until('the start-up claim', () => relay!.stats().claims === 1);
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) {
      const [a] = await log.appendMany([{ type: 'agent.tool.requested' }, { type: 'agent.session.started' }]);
      sent.push(a!.event_id);
    }
    await until('every event handled', () => seen.length === 20);
    expect(seen.sort()).toEqual(sent.sort());
    // `agent.session.started` has no subscriber here: it is in the log and gets no bus row at all.
    expect(relay.stats()).toMatchObject({ claims: 1, handoffs: 20 });
    expect(await openRows(store)).toBe(20); // handled, not yet acknowledged
    expect((await log.list({ type: 'agent.session.started', limit: 100 })).length).toBe(20);
    await relay.stop();
    expect(relay.stats()).toMatchObject({ ackedRows: 20 });
    expect(await openRows(store)).toBe(0);
  });

  it('writes bus rows for every event again once the relay stops, and for types a subscriber takes later', async () => {
    store = await freshStore('sqlite');
    const log = new EventLog(store.db, DEFAULTS);
    relay = new Relay(store.db, log, { pipeline, run: runner(), idleMs: 60_000 });
    let takes = 'agent.tool.requested';
    relay.subscribe({ name: 'tools', accepts: (t) => t === takes, handle: async () => {} });
    relay.start();
    await log.appendMany([{ type: 'agent.tool.requested' }, { type: 'agent.session.started' }]);
    expect(relay.stats().handoffs).toBe(1);
    takes = 'agent.session.started'; // a reload: the subscriber's types are read at each append
    await log.append({ type: 'agent.session.started' });
    expect(relay.stats().handoffs).toBe(2);
    await relay.stop();
    // No relay here (a CLI process, or the gateway stopped): every event is queued for whoever relays.
    await log.appendMany([{ type: 'agent.tool.requested' }, { type: 'agent.session.started' }]);
    expect(await openRows(store)).toBe(2);
  });

  it('keeps a correlation in order: the events behind a failed one wait for its retry through the claim path', async () => {
    store = await freshStore('sqlite');
    const log = new EventLog(store.db, DEFAULTS);
    relay = new Relay(store.db, log, { pipeline, run: runner(), idleMs: 20, maxBackoffMs: 30 });
    const seen: string[] = [];
    relay.subscribe(failingOnce('0', (e) => String(e.subject.action), seen));
    relay.start();
    for (let n = 0; n < 5; n++)
      await log.append({
        type: 'agent.tool.requested',
        correlation_id: 'corr-1',
        subject: { action: String(n) },
      });
    await until('the whole correlation', () => seen.length === 6);
    expect(seen).toEqual(['0 failed', '0', '1', '2', '3', '4']);
  });

  it('decides each row of one append by its own correlation: behind a waiting retry it queues, beside it it is handed off', async () => {
    store = await freshStore('sqlite');
    const log = new EventLog(store.db, DEFAULTS);
    relay = new Relay(store.db, log, { pipeline, run: runner(), idleMs: 20, maxBackoffMs: 400 });
    const seen: string[] = [];
    relay.subscribe(failingOnce('corr-1:0', (e) => `${e.correlation_id}:${String(e.subject.action)}`, seen));
    relay.start();
    await log.append({ type: 'agent.tool.requested', correlation_id: 'corr-1', subject: { action: '0' } });
    await until('the first failure', () => seen.length > 0);
    const before = relay.stats().handoffs;
    // One statement writes all four rows: corr-1's wait behind its retry, corr-2's go at once.
    await log.appendMany(
      [
        ['corr-1', '1'],
        ['corr-2', 'a'],
        ['corr-1', '2'],
        ['corr-2', 'b'],
      ].map(([c, a]) => ({ type: 'agent.tool.requested', correlation_id: c!, subject: { action: a! } })),
    );
    await until('corr-2 handed off', () => seen.includes('corr-2:b'));
    expect(relay.stats().handoffs - before).toBe(2);
    expect(seen).toEqual(['corr-1:0 failed', 'corr-2:a', 'corr-2:b']);
    await until('the whole of corr-1', () => seen.length === 6);
    expect(seen.filter((s) => s.startsWith('corr-1:'))).toEqual([
      'corr-1:0 failed',
      'corr-1:0',
      'corr-1:1',
      'corr-1:2',
    ]);
  });

  it('hands an event over again after a crash before its acknowledgement, once the lease has run out; the inbox keeps the effect once', async () => {
    store = await freshStore('sqlite');
    const log = new EventLog(store.db, DEFAULTS);
    const effects: string[] = [];
    const sub = {
      name: 'effects',
      accepts: () => true,
      handle: async (e: { event_id: string }) => void effects.push(e.event_id),
    };
    const crashed = new Relay(store.db, log, { pipeline, run: runner(), idleMs: 60_000 });
    crashed.subscribe(sub);
    crashed.start();
    const e = await log.append({ type: 'agent.tool.requested' });
    await until('the hand-off', () => effects.length === 1);
    // The process dies here: no stop(), so the row stays claimed under the hand-off's lease.
    log.setHandoff(undefined);
    expect(await openRows(store)).toBe(1);
    const later = new Relay(store.db, log, { pipeline, now: () => Date.now() + 31_000 });
    later.subscribe({ ...sub, handle: async (ev) => void effects.push(`again ${ev.event_id}`) });
    await later.drain();
    expect(effects).toEqual([e.event_id]); // claimed again, and the inbox saw it was handled
    expect(await openRows(store)).toBe(0);
    await crashed.stop().catch(() => undefined);
  });
});
