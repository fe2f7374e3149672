import { afterEach, describe, expect, it } from 'vitest';
import type { SendResult } from '../../channels/index.js';
import { EventLog } from '../../log/log.js';
import { dialects, freshStore, type TestStore } from '../../store/testing.js';
import { deliveryConfigSchema, deliveryPolicies } from '../config.js';
import type { DynamicSender } from '../port.js';
import { DeliveryEngine } from './engine.js';
import { createDeliveryService, type ServiceDeps } from './service.js';
import type { DeliveryRow } from './sql.js';
import { eventually } from '../testing.js';

/**
 * `enqueueNow`: a row this process enqueues is sent right after the enqueuing commit, with no claim in
 * between; the row is leased in that transaction, so no claim repeats the send while it is in flight,
 * and a crash before the send leaves it to the lease sweep and the normal claim.
 */
describe.each(await dialects())('a delivery sent at its enqueue on %s', (dialect) => {
  let store: TestStore;
  let engine: DeliveryEngine | undefined;
  afterEach(async () => {
    await engine?.stop();
    engine = undefined;
    await store?.cleanup();
  });

  /** A push-like sender whose attempts wait until `release()`; it counts them. */
  function gatedSender() {
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => (open = r));
    const sent: unknown[] = [];
    let called: () => void = () => {};
    const first = new Promise<void>((r) => (called = r));
    const sender: DynamicSender = {
      type: 'a2a-push',
      async send(payload): Promise<SendResult> {
        sent.push(payload);
        called();
        await gate;
        return { kind: 'ok' };
      },
    };
    return { sender, sent, first, release: () => open() };
  }

  async function setup(
    sender: DynamicSender,
    opts: { schedule?: number[]; lost?: boolean; clock?: { t: number } } = {},
  ) {
    store = await freshStore(dialect);
    const db = store.db;
    const log = new EventLog(db, { tenant_id: 'default', environment: 'test' });
    const policies = deliveryPolicies(
      deliveryConfigSchema.parse({
        retry_schedule_ms: opts.schedule ?? [0, 0, 0],
        jitter: 0,
        timeout_ms: 1000,
      }),
    );
    const now = opts.clock ? () => opts.clock!.t : Date.now;
    const dynamic = (d: string) => (d.startsWith('a2a-push:') ? sender : undefined);
    const e = new DeliveryEngine({
      db,
      log,
      channels: () => ({}),
      policies,
      egress: { post: async () => ({ status: 200, headers: {}, body: '' }) } as never,
      secret: () => undefined,
      now,
      dynamic,
      pollMs: 60_000,
    });
    engine = e;
    e.start();
    const immediate: ServiceDeps['immediate'] = {
      admitNow: (tx, destination) => e.admitNow(tx, destination),
      // The process died right after the commit: nothing is sent.
      sendLeased: opts.lost ? () => {} : (row) => e.sendLeased(row),
    };
    const svc = createDeliveryService({
      db,
      log,
      channels: () => ({}),
      now,
      endpointPolicy: policies,
      retry: policies.retry,
      dynamic,
      immediate,
      wake: () => e.rowDue(),
    });
    const enqueue = () =>
      db.tx(async (tx) => {
        const cause = await log.append({ type: 'agent.task.started' }, tx);
        const payload = { eventId: cause.event_id, body: '{}' };
        return svc.enqueueNow(tx, {
          eventId: cause.event_id,
          destination: 'a2a-push:http://127.0.0.1:1',
          message: payload,
        });
      });
    const rows = () => db.query<DeliveryRow>({ text: 'SELECT * FROM deliveries' });
    return { e, enqueue, rows };
  }

  it('sends the row right after the commit, and no claim takes it while the send is in flight', async () => {
    const s = gatedSender();
    const { e, enqueue, rows } = await setup(s.sender);
    const { created } = await enqueue();
    expect(created).toBe(true);
    await s.first;
    const [row] = await rows();
    expect(row).toMatchObject({ status: 'claimed', attempts: expect.anything() });
    expect(Number(row!.lease_until)).toBeGreaterThan(Date.now());
    expect(await e.runOnce()).toBe(0);
    s.release();
    await eventually(async () => (await rows())[0]?.status === 'succeeded');
    expect(Number((await rows())[0]!.attempts)).toBe(1);
    expect(s.sent).toHaveLength(1);
  });

  it('leaves a row whose send never happened (a crash after the commit) to the lease sweep and the claim', async () => {
    const s = gatedSender();
    s.release();
    const clock = { t: Date.now() };
    const { e, enqueue, rows } = await setup(s.sender, { lost: true, clock });
    await enqueue();
    expect((await rows())[0]?.status).toBe('claimed');
    expect(await e.runOnce()).toBe(0); // leased: not claimable
    expect(s.sent).toHaveLength(0);
    clock.t += 60_000; // past the lease (timeout + margin)
    expect(await e.runOnce()).toBe(1);
    expect(s.sent).toHaveLength(1);
    expect((await rows())[0]?.status).toBe('succeeded');
  });

  it('queues the row for the claim when the schedule delays its first attempt', async () => {
    const s = gatedSender();
    s.release();
    const { e, enqueue, rows } = await setup(s.sender, { schedule: [3000, 0] });
    await enqueue();
    expect((await rows())[0]).toMatchObject({ status: 'pending', lease_until: null });
    expect(await e.runOnce()).toBe(0);
    expect(s.sent).toHaveLength(0);
  });
});
