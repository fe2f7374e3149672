import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import { dialects } from '../store/testing.js';
import { type TestApp, testApp } from '../server/testing.js';
import { coreModule } from '../server/core-routes.js';
import { type NotifyModule, notifyModule } from './module.js';
import { recordingDeliveries } from './testing.js';
import { outboundPort } from './port.js';

const T0 = 1_800_000_000_000;
const MIN = 60_000;

describe.each(await dialects())('approval reminders on %s', (dialect) => {
  let t: TestApp | undefined;
  let notify: NotifyModule;
  let clock = T0;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(notifyCfg: Record<string, unknown> = {}) {
    clock = T0;
    notify = notifyModule();
    t = await testApp({
      dialect,
      now: () => clock,
      // The approvals service (no expiry worker: the clock is moved by hand) lists what is expiring.
      modules: [coreModule(), approvalsModule({ expiryWorker: false }), notify],
      config: {
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        notify: notifyCfg,
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return { services: t.services, seen: deliveries.seen };
  }

  /** An approval as the approvals module writes it: its request event, then its row. */
  async function pending(id: string, expiresAt: number, state = 'pending') {
    const s = t!.services;
    const req = await s.emit({
      type: 'agent.approval.requested',
      actor: { agent_id: 'bot' },
      execution: { task_id: null },
      redacted_summary: { approval_id: id, action: 'deploy prod', reason: 'release 1.2' },
    });
    await s.db.query({
      text: `INSERT INTO approvals (id, state, action, reason, plan, plan_digest, task_id, requested_by,
               correlation_id, request_event_id, created_at, expires_at)
             VALUES ($1, $2, 'deploy prod', 'release 1.2', '{}', 'd', NULL, 'bot', $3, $4, $5, $6)`,
      values: [id, state, req.correlation_id, req.event_id, clock, expiresAt],
    });
    return req;
  }

  const sentEvents = async () =>
    (await t!.services.log.list({ type: 'agent.notification.sent', limit: 100 })).map((e) => e.envelope);

  it('re-announces a pending approval once on the priority lane when it enters the lead time', async () => {
    const { seen } = await start();
    const req = await pending('apr_01JABCDEFGHJKMNPQRSTVWXYZ0', T0 + 15 * MIN);
    expect(await notify.remindDue()).toBe(0);
    clock = T0 + 13 * MIN + 30_000; // 90 s left: inside the default 120 s lead
    expect(await notify.remindDue()).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ destination: 'phone', priority: 'high' });
    expect(seen[0]?.message).toMatchObject({ kind: 'approval', stage: 'awaiting_approval' });
    expect(String(seen[0]?.message.summary)).toBe('Reminder: expires in 2 min · deploy prod');
    const [sent] = await sentEvents();
    expect(sent?.causation_id).toBe(req.event_id);
    expect(sent?.redacted_summary).toMatchObject({
      reminder: true,
      approval_id: 'apr_01JABCDEFGHJKMNPQRSTVWXYZ0',
      lane: 'high',
    });
    clock += 30_000;
    expect(await notify.remindDue()).toBe(0);
    expect(seen).toHaveLength(1);
  });

  it('leaves decided and already expired approvals alone', async () => {
    const { seen } = await start();
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY01', T0 + MIN, 'approved');
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY02', T0 - 1);
    expect(await notify.remindDue()).toBe(0);
    expect(seen).toEqual([]);
  });

  it('follows notify.reannounce_before_seconds, and 0 turns reminders off', async () => {
    const { seen } = await start({ reannounce_before_seconds: 600, locale: 'zh' });
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY03', T0 + 15 * MIN);
    clock = T0 + 6 * MIN;
    expect(await notify.remindDue()).toBe(1);
    expect(String(seen[0]?.message.summary)).toContain('提醒：9 分钟后过期');
    await t!.cleanup();
    const again = await start({ reannounce_before_seconds: 0 });
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY04', T0 + 30_000);
    expect(await notify.remindDue()).toBe(0);
    expect(again.seen).toEqual([]);
  });

  it('sends one reminder when two passes race for the same approval', async () => {
    const { seen } = await start();
    clock = T0 - 10 * MIN; // asked ten minutes ago, expires in one
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY05', T0 + MIN);
    clock = T0;
    const counts = await Promise.all([notify.remindDue(), notify.remindDue()]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
    expect(seen).toHaveLength(1);
  });

  it('never re-announces an approval that lives no longer than the re-announce window', async () => {
    const { seen } = await start();
    // A permission prompt held 5 s on the phone: announced once, and it must not buzz again.
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY06', T0 + 5_000);
    await pending('apr_01JABCDEFGHJKMNPQRSTVWXY07', T0 + 120_000);
    clock = T0 + 1_000;
    expect(await notify.remindDue()).toBe(0);
    expect(seen).toEqual([]);
  });
});
