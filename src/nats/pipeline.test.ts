import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson, type Envelope } from '../envelope/index.js';
import { EventLog } from '../log/log.js';
import { Relay } from '../log/relay.js';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { NATS_TOPIC } from './module.js';

/**
 * The pipelined relay the NATS module runs (`RelayOptions.pipeline`): one claim takes the runs of rows
 * behind the correlations it holds, each correlation's rows go out one after another, and a failure
 * holds its correlation's later rows behind its retry. On both dialects, with two relays (two
 * replicas' workers) on one topic for the order across processes.
 */
const DIALECTS = await dialects();
const DEFAULTS = { tenant_id: 't1', environment: 'test' };

describe.each(DIALECTS)('pipelined relay on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => {
    await store?.cleanup();
  });

  async function queued(log: EventLog, n: number, correlations: number): Promise<Envelope[]> {
    const envs: Envelope[] = [];
    for (let i = 0; i < n; i += 50)
      envs.push(
        ...(await log.appendMany(
          Array.from({ length: Math.min(50, n - i) }, (_, j) => ({
            type: 'agent.tool.requested' as const,
            correlation_id: `c${(i + j) % correlations}`,
            redacted_summary: { i: i + j },
          })),
        )),
      );
    await log.enqueue(envs, NATS_TOPIC);
    return envs;
  }

  const natsDepth = async () =>
    Number(
      (
        await store.db.query<{ n: number }>({
          text: `SELECT count(*) AS n FROM outbox WHERE topic = '${NATS_TOPIC}'`,
        })
      )[0]!.n,
    );

  const order = (envs: readonly Envelope[]) => {
    const by = new Map<string, string[]>();
    for (const e of envs) by.set(e.correlation_id, [...(by.get(e.correlation_id) ?? []), e.event_id]);
    return by;
  };

  it('claims many rows of a correlation at once and hands them out in order, one in flight per correlation', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const envs = await queued(log, 300, 7);
    const relay = new Relay(store.db, log, {
      topic: NATS_TOPIC,
      pipeline: true,
      batchSize: 20,
      concurrency: 5,
    });
    const seen: Envelope[] = [];
    const busy = new Set<string>();
    let overlap = 0;
    let most = 0;
    relay.subscribe({
      name: 'pub',
      accepts: () => true,
      ownsInbox: true,
      handle: async (e) => {
        if (busy.has(e.correlation_id)) overlap++;
        busy.add(e.correlation_id);
        most = Math.max(most, busy.size);
        await new Promise((r) => setTimeout(r, Math.random() * 2));
        busy.delete(e.correlation_id);
        seen.push(e);
      },
    });
    await relay.drain();
    expect(overlap).toBe(0);
    expect(most).toBeLessThanOrEqual(5);
    expect(order(seen)).toEqual(order(envs));
    // Fewer claims than one per row of the longest correlation (43): runs were claimed behind heads.
    expect(relay.stats().claims).toBeLessThan(43);
    expect(await natsDepth()).toBe(0);
  });

  it('holds a correlation’s later rows behind a failed one and relays them in order after its retry', async () => {
    store = await freshStore(dialect);
    let clock = 1_000_000;
    const log = new EventLog(store.db, DEFAULTS, () => clock);
    const envs = await queued(log, 40, 2);
    const relay = new Relay(store.db, log, {
      topic: NATS_TOPIC,
      pipeline: true,
      batchSize: 10,
      maxAttempts: Number.POSITIVE_INFINITY,
      everyEvent: true, // as the NATS relay: the claim reads no types
      now: () => clock,
    });
    const failing = envs.filter((e) => e.correlation_id === 'c0')[3]!;
    let down = true;
    const seen: Envelope[] = [];
    relay.subscribe({
      name: 'pub',
      accepts: () => true,
      ownsInbox: true,
      handle: async (e) => {
        if (down && e.event_id === failing.event_id) throw new Error('NATS down');
        seen.push(e);
      },
    });
    await relay.drain();
    const c0 = envs.filter((e) => e.correlation_id === 'c0').map((e) => e.event_id);
    // c1 went on; c0 stopped before the failing row.
    expect(order(seen).get('c1')).toEqual(order(envs).get('c1'));
    expect(order(seen).get('c0')).toEqual(c0.slice(0, 3));
    down = false;
    clock += 60_000;
    await relay.drain();
    expect(order(seen).get('c0')).toEqual(c0);
    expect(seen).toHaveLength(40);
    expect(await natsDepth()).toBe(0);
  });

  it('hands each claimed event to the subscriber with its stored JSON, which parses to the same envelope', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const envs = await queued(log, 60, 4);
    const relay = new Relay(store.db, log, { topic: NATS_TOPIC, pipeline: true, batchSize: 10 });
    const bodies = new Map<string, string | undefined>();
    relay.subscribe({
      name: 'pub',
      accepts: () => true,
      ownsInbox: true,
      handle: async (e, body) => {
        bodies.set(e.event_id, body);
        expect(JSON.parse(body ?? 'null')).toEqual(e);
      },
    });
    await relay.drain();
    expect(bodies.size).toBe(60);
    // The bytes the hash covers, as stored: what the NATS publisher sends as the CloudEvent's data.
    for (const e of envs) expect(bodies.get(e.event_id)).toBe(canonicalJson(e));
  });

  it('keeps each correlation in order with two relays claiming one topic side by side', async () => {
    store = await freshStore(dialect);
    const log = new EventLog(store.db, DEFAULTS);
    const envs = await queued(log, 400, 9);
    const other = dialect === 'postgres' ? await store.reopen() : store.db;
    const seen: Envelope[] = [];
    const busy = new Set<string>();
    let overlap = 0;
    const relays = [store.db, other].map((db) => {
      const r = new Relay(db, new EventLog(db, DEFAULTS), {
        topic: NATS_TOPIC,
        pipeline: true,
        batchSize: 15,
        concurrency: 4,
        everyEvent: true,
      });
      r.subscribe({
        name: 'pub',
        accepts: () => true,
        ownsInbox: true,
        handle: async (e) => {
          if (busy.has(e.correlation_id)) overlap++;
          busy.add(e.correlation_id);
          await new Promise((res) => setTimeout(res, Math.random() * 2));
          busy.delete(e.correlation_id);
          seen.push(e);
        },
      });
      return r;
    });
    await Promise.all(relays.map((r) => r.drain()));
    await Promise.all(relays.map((r) => r.drain()));
    expect(overlap).toBe(0);
    expect(order(seen)).toEqual(order(envs));
    if (other !== store.db) await other.close();
  });
});
