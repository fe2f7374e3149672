import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { auth, testApp, type TestApp } from '../server/testing.js';
import type { Db } from '../store/port.js';
import { PostgresDb } from '../store/postgres.js';
import { dialects, freshStore, PG_URL, pgAvailable, type TestStore } from '../store/testing.js';
import { Bus, channelFor } from './bus.js';
import { Election } from './election.js';
import { NotLeaderError } from './port.js';

const logger = pino({ level: 'silent' });
/** A fresh PostgreSQL schema runs every module's migrations: tens of seconds on a loaded shared machine. */
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

function election(db: Db, id: string, leaseMs = 5_000, clock?: () => number): Election {
  return new Election({
    db,
    replica: { id, name: id, host: 'test', pid: 1 },
    heartbeatMs: 100,
    leaseMs,
    forgetAfterMs: 86_400_000,
    logger,
    ...(clock ? { clock } : {}),
  });
}

const stores: TestStore[] = [];
const extra: Db[] = [];
const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.cleanup();
  for (const d of extra.splice(0)) await d.close();
  for (const s of stores.splice(0)) await s.cleanup();
});

/** A second connection to the same store (another "process"), without migrating it again. */
async function another(store: TestStore): Promise<Db> {
  const d =
    store.dialect === 'postgres'
      ? await new PostgresDb({ url: PG_URL, schema: store.location, max: 3 }).open()
      : await store.reopen();
  extra.push(d);
  return d;
}

async function twoConnections(dialect: 'sqlite' | 'postgres'): Promise<[Db, Db]> {
  const store = await freshStore(dialect);
  stores.push(store);
  const second = await another(store);
  return [store.db, second];
}

describe.each(await dialects())('the leader election on %s', (dialect) => {
  it('gives the first replica term 1 and the next term to whoever takes over after a clean stop', async () => {
    const [a, b] = await twoConnections(dialect);
    const ea = election(a, 'rep_a');
    const eb = election(b, 'rep_b');
    expect(await ea.beat()).toBe(true);
    expect(ea.fencingToken()).toBe(1);
    if (dialect === 'postgres') {
      expect(await eb.beat()).toBe(false);
      expect(eb.fencingToken()).toBeUndefined();
    }
    await ea.resign();
    expect(ea.isLeader()).toBe(false);
    expect(await eb.beat()).toBe(true);
    expect(eb.fencingToken()).toBe(2);
    // The holder renews under the same token.
    expect(await eb.beat()).toBe(true);
    expect(eb.fencingToken()).toBe(2);
  });

  it('tells listeners when this replica starts and stops leading', async () => {
    const [a] = await twoConnections(dialect);
    const ea = election(a, 'rep_a');
    const seen: [boolean, number | undefined][] = [];
    ea.onLeaderChange((leader, token) => seen.push([leader, token]));
    await ea.beat();
    await ea.beat();
    await ea.resign();
    expect(seen).toEqual([
      [true, 1],
      [false, undefined],
    ]);
  });
});

describe('the leader election on sqlite', () => {
  it('leads at once even when a crashed earlier process left its lease: one file, one gateway', async () => {
    const [a, b] = await twoConnections('sqlite');
    const crashed = election(a, 'rep_crashed');
    await crashed.beat();
    const restarted = election(b, 'rep_restarted');
    expect(await restarted.beat()).toBe(true);
    expect(restarted.fencingToken()).toBe(2);
  });
});

describe.runIf(await pgAvailable())('the leader election on postgres, when a leader dies', () => {
  it('moves the lease once it has run out, with the next fencing token, and fences the old leader out', async () => {
    const [a, b] = await twoConnections('postgres');
    // The dead leader's clock is frozen: it still believes it leads, which is what fencing is for.
    const frozen = performance.now();
    const ea = election(a, 'rep_a', 300, () => frozen);
    const eb = election(b, 'rep_b', 300);
    expect(await ea.beat()).toBe(true);
    expect(await eb.beat()).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(await eb.beat()).toBe(true);
    expect(eb.fencingToken()).toBe(2);
    expect(ea.isLeader()).toBe(true);
    await expect(a.tx((tx) => ea.fence(tx))).rejects.toBeInstanceOf(NotLeaderError);
    // Having been fenced out, it no longer believes it leads.
    expect(ea.isLeader()).toBe(false);
    await expect(b.tx((tx) => eb.fence(tx))).resolves.toBeUndefined();
  });

  it('stops believing it leads when its own clock passes the lease without a renewal', async () => {
    const [a] = await twoConnections('postgres');
    let t = 0;
    const ea = election(a, 'rep_a', 1_000, () => t);
    await ea.beat();
    t = 999;
    expect(ea.isLeader()).toBe(true);
    t = 1_000;
    expect(ea.isLeader()).toBe(false);
    expect(ea.fencingToken()).toBeUndefined();
  });

  it('elects one leader among replicas that start at the same moment', async () => {
    const store = await freshStore('postgres');
    stores.push(store);
    const dbs = [store.db];
    for (let i = 0; i < 3; i++) dbs.push(await another(store));
    const es = dbs.map((d, i) => election(d, `rep_${i}`));
    const won = await Promise.all(es.map((e) => e.beat().catch(() => false)));
    expect(won.filter(Boolean)).toHaveLength(1);
  });
});

describe.runIf(await pgAvailable())('the broadcast between replicas (PostgreSQL LISTEN/NOTIFY)', () => {
  it('wakes a listener on another connection at commit, and never for a rolled-back transaction', async () => {
    const [a, b] = await twoConnections('postgres');
    const sender = new Bus(a, logger);
    const receiver = new Bus(b, logger);
    try {
      await receiver.connect();
      expect(receiver.listening).toBe(true);
      const got: string[] = [];
      let arrived: () => void = () => {};
      receiver.listen('approvals', (p) => {
        got.push(p);
        arrived();
      });
      await a
        .tx(async (tx) => {
          await sender.broadcast(tx, 'approvals', 'apr_rolled_back');
          throw new Error('roll back');
        })
        .catch(() => {});
      const heard = new Promise<void>((r) => {
        arrived = r;
      });
      await a.tx((tx) => sender.broadcast(tx, 'approvals', 'apr_1'));
      await heard;
      expect(got).toEqual(['apr_1']);
    } finally {
      await sender.close();
      await receiver.close();
    }
  });

  it('names one channel per schema, within PostgreSQL’s 63 bytes', () => {
    expect(channelFor('t_1')).toBe('switchboard:t_1');
    expect(channelFor('x'.repeat(80)).length).toBeLessThanOrEqual(63);
    expect(channelFor('x'.repeat(80))).not.toBe(channelFor('y'.repeat(80)));
  });
});

describe.each(await dialects())('GET /v1/cluster on %s', (dialect) => {
  it('shows this replica as the leader with its heartbeat, to an admin', async () => {
    const t = await testApp({ dialect });
    apps.push(t);
    const res = await t.app.request('/v1/cluster', { headers: auth('admin') });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      self: { id: string; leader: boolean; fencing_token: number };
      leader: { replica_id: string; fencing_token: number };
      replicas: { id: string; alive: boolean; leader: boolean; last_heartbeat_at: string }[];
      terms: { fencing_token: number; replica_id: string }[];
      store: string;
    };
    expect(body.store).toBe(dialect);
    expect(body.self.leader).toBe(true);
    expect(body.self.id).toMatch(/^rep_/);
    expect(body.leader).toMatchObject({ replica_id: body.self.id, fencing_token: body.self.fencing_token });
    expect(body.replicas).toEqual([
      expect.objectContaining({
        id: body.self.id,
        alive: true,
        leader: true,
        last_heartbeat_at: expect.any(String),
      }),
    ]);
    expect(body.terms[0]).toEqual({
      fencing_token: body.self.fencing_token,
      replica_id: body.self.id,
      acquired_at: expect.any(String),
    });
  });

  it('answers 401 without a key and 403 to an agent or approver key', async () => {
    const t = await testApp({ dialect });
    apps.push(t);
    expect((await t.app.request('/v1/cluster')).status).toBe(401);
    expect((await t.app.request('/v1/cluster', { headers: auth('agent') })).status).toBe(403);
    expect((await t.app.request('/v1/cluster', { headers: auth('approver') })).status).toBe(403);
  });
});
