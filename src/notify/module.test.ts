import { afterEach, describe, expect, it } from 'vitest';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { coreModule } from '../server/core-routes.js';
import { type NotifyModule, notifyModule } from './module.js';
import { recordingDeliveries } from './testing.js';
import { outboundPort } from './port.js';
import { type TaskView, tasksPort } from '../tasks/port.js';

const T0 = 1_800_000_000_000;
const CHANNELS = {
  phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' },
  partner: { type: 'webhook', url: 'https://partner.example/hook', secret_env: 'HOOK_SECRET' },
};

describe.each(await dialects())('POST /v1/progress on %s', (dialect) => {
  let t: TestApp | undefined;
  let notify: NotifyModule;
  let clock = T0;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(
    opts: { notify?: Record<string, unknown>; routes?: unknown[]; engine?: boolean } = {},
  ) {
    clock = T0;
    notify = notifyModule();
    t = await testApp({
      dialect,
      now: () => clock,
      modules: [coreModule(), notify],
      config: {
        channels: CHANNELS,
        routes: opts.routes ?? [{ match: 'true', channels: ['phone'] }],
        notify: { allowed_link_domains: ['example.com'], ...opts.notify },
      },
    });
    const deliveries = recordingDeliveries();
    if (opts.engine !== false) t.provide(outboundPort, deliveries);
    return { app: t.app, services: t.services, seen: deliveries.seen };
  }

  const post = (body: unknown, headers: Record<string, string> = auth('agent')) =>
    t!.app.request('/v1/progress', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  const events = async (type: string) =>
    (await t!.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);

  it('answers { id, status } and queues one delivery per routed channel in the event transaction', async () => {
    const { seen } = await start({ notify: { progress_merge_window_seconds: 0 } });
    const res = await post({ stage: 'progress', summary: 'tests green, opening the PR' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; status: string };
    expect(body.status).toBe('sent');
    expect(body.id).toMatch(/^evt_/);
    const [reported] = await events('agent.progress.reported');
    expect(reported?.event_id).toBe(body.id);
    const [sent] = await events('agent.notification.sent');
    expect(sent?.causation_id).toBe(body.id);
    expect(seen).toEqual([
      expect.objectContaining({ destination: 'phone', eventId: sent?.event_id, priority: 'normal' }),
    ]);
    expect(seen[0]?.message).toMatchObject({
      kind: 'progress',
      stage: 'progress',
      summary: 'tests green, opening the PR',
    });
  });

  it('folds a flood of the same failure: the first at once, then one digest with the count', async () => {
    const { seen } = await start();
    for (let i = 0; i < 14; i++) {
      clock = T0 + i * 30_000;
      const res = await post({ stage: 'failed', summary: 'npm test failed', detail: 'exit 1' });
      expect(((await res.json()) as { status: string }).status).toBe(i === 0 ? 'sent' : 'merged');
    }
    expect(seen).toHaveLength(1);
    const folded = (await events('agent.notification.suppressed')).filter(
      (e) => e.redacted_summary.reason === 'flood_folded',
    );
    expect(folded).toHaveLength(13);
    clock = T0 + 600_000;
    expect(await notify.flushDue()).toBe(1);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({ destination: 'phone', priority: 'high' });
    expect(seen[1]?.message).toMatchObject({
      stage: 'failed',
      summary: 'failed 14× in 10 min · npm test failed',
    });
    const sent = (await events('agent.notification.sent')).at(-1);
    expect(sent?.redacted_summary.flood).toMatchObject({ repeats: 14 });
  });

  it('caps priority messages per hour with an audited priority_cap suppression', async () => {
    const { seen } = await start({ notify: { priority_per_hour: 2 } });
    for (const summary of ['disk full', 'db down', 'queue stuck']) {
      await post({ stage: 'blocked', summary });
    }
    expect(seen.map((d) => d.message.summary)).toEqual(['disk full', 'db down']);
    const [capped] = await events('agent.notification.suppressed');
    expect(capped?.redacted_summary).toMatchObject({ reason: 'priority_cap' });
  });

  it('sends "failed" at once on the priority lane', async () => {
    const { seen } = await start();
    const res = await post({ stage: 'failed', summary: 'migration failed', severity: 'warn' });
    expect(await res.json()).toMatchObject({ status: 'sent' });
    expect(seen[0]).toMatchObject({ priority: 'high' });
    expect(seen[0]?.message.mention).toBeUndefined();
  });

  it('mentions the owner only for a critical report', async () => {
    const { seen } = await start();
    await post({ stage: 'blocked', summary: 'prod is down', severity: 'critical' });
    expect(seen[0]?.message.mention).toBe(true);
  });

  it('does not send "started", and audits it', async () => {
    const { seen } = await start();
    expect(await (await post({ stage: 'started', summary: 'on it' })).json()).toMatchObject({
      status: 'merged',
    });
    expect(seen).toHaveLength(0);
    const [s] = await events('agent.notification.suppressed');
    expect(s?.redacted_summary).toMatchObject({ reason: 'started_not_sent' });
  });

  it('sends at most six of twenty "still running" reports in a minute and audits each of the rest', async () => {
    const { seen } = await start({ notify: { progress_merge_window_seconds: 0 } });
    const statuses: string[] = [];
    for (let i = 0; i < 20; i++) {
      clock = T0 + i * 2900;
      statuses.push(
        (
          (await (await post({ stage: 'progress', summary: `still running (${i})` })).json()) as {
            status: string;
          }
        ).status,
      );
    }
    expect(seen).toHaveLength(6);
    expect(statuses.filter((s) => s === 'rate_limited')).toHaveLength(14);
    const suppressed = await events('agent.notification.suppressed');
    expect(suppressed.filter((e) => e.redacted_summary.reason === 'rate_limit')).toHaveLength(14);
  });

  it('folds a burst into one digest that the worker sends when the merge window closes', async () => {
    const { seen } = await start({ notify: { progress_merge_window_seconds: 30 } });
    const statuses: string[] = [];
    for (let i = 0; i < 20; i++) {
      clock = T0 + i * 1000;
      statuses.push(
        (
          (await (await post({ stage: 'progress', summary: `still running (${i})` })).json()) as {
            status: string;
          }
        ).status,
      );
    }
    expect(statuses[0]).toBe('queued');
    expect(statuses.slice(1).every((s) => s === 'merged')).toBe(true);
    expect(seen).toHaveLength(0);
    clock = T0 + 30_000;
    expect(await notify.flushDue()).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toMatchObject({ summary: 'still running (19)' });
    expect(String(seen[0]?.message.detail)).toContain('20 progress reports');
    expect(
      (await events('agent.notification.suppressed')).filter(
        (e) => e.redacted_summary.reason === 'merged_into_digest',
      ),
    ).toHaveLength(19);
  });

  it('de-duplicates a consecutive identical report', async () => {
    await start();
    await post({ stage: 'blocked', summary: 'waiting for the DB' });
    const again = await post({ stage: 'blocked', summary: 'waiting for the DB' });
    // blocked is never de-duplicated: a repeat is counted into the flood's digest instead
    expect(await again.json()).toMatchObject({ status: 'merged' });
    await post({ stage: 'progress', summary: 'same' });
    expect(await (await post({ stage: 'progress', summary: 'same' })).json()).toMatchObject({
      status: 'deduped',
    });
  });

  it('blocks a report holding a secret, and keeps the secret out of the log', async () => {
    const { seen } = await start();
    const token = ['ghp', '_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'].join('');
    const res = await post({ stage: 'failed', summary: 'push failed', detail: `token ${token}` });
    expect(await res.json()).toMatchObject({ status: 'blocked' });
    expect(seen).toHaveLength(0);
    const [b] = await events('agent.notification.blocked');
    expect(b?.redacted_summary).toMatchObject({ reason: 'secret', secrets: ['github_token'] });
    const all = await t!.services.log.list({ limit: 1000 });
    expect(JSON.stringify(all)).not.toContain(token);
  });

  it('masks a secret and sends when the config says mask', async () => {
    const { seen } = await start({ notify: { secrets: 'mask' } });
    const res = await post({ stage: 'failed', summary: 'login with password=hunter2xyz failed' });
    expect(await res.json()).toMatchObject({ status: 'sent' });
    expect(seen[0]?.message.summary).toBe('login with password=[redacted:password_assignment] failed');
  });

  it('defangs a phishing link and keeps an artifact on an allowed domain', async () => {
    const { seen } = await start();
    await post({
      stage: 'done',
      summary: 'done; see https://evil.test/login',
      artifact: 'https://ci.example.com/pr/7',
    });
    expect(seen[0]?.message).toMatchObject({
      summary: 'done; see hxxps://evil[.]test/login',
      artifact: 'https://ci.example.com/pr/7',
    });
  });

  it('replaces internal names with aliases for an external channel only', async () => {
    const { seen } = await start({
      routes: [{ match: 'true', channels: ['phone', 'partner'] }],
      notify: { external_channels: ['partner'], aliases: { 'acme/payments-api': 'the service' } },
    });
    await post({ stage: 'blocked', summary: 'acme/payments-api needs a migration' });
    const by = Object.fromEntries(seen.map((s) => [s.destination, s.message.summary]));
    expect(by).toEqual({
      phone: 'acme/payments-api needs a migration',
      partner: 'the service needs a migration',
    });
  });

  it('routes by CEL over stage and severity', async () => {
    const { seen } = await start({
      routes: [
        { match: 'stage == "failed"', channels: ['partner'] },
        { match: 'severity == "critical"', channels: ['phone'] },
      ],
    });
    await post({ stage: 'failed', summary: 'x' });
    await post({ stage: 'blocked', summary: 'y', severity: 'critical' });
    expect(seen.map((s) => s.destination)).toEqual(['partner', 'phone']);
  });

  it('answers blocked and audits no_route when no route matches', async () => {
    await start({ routes: [{ match: 'stage == "done"', channels: ['phone'] }] });
    expect(await (await post({ stage: 'failed', summary: 'x' })).json()).toMatchObject({ status: 'blocked' });
    const [s] = await events('agent.notification.suppressed');
    expect(s?.redacted_summary.reason).toBe('no_route');
  });

  it('answers queued and records that no delivery engine runs', async () => {
    await start({ engine: false });
    expect(await (await post({ stage: 'failed', summary: 'x' })).json()).toMatchObject({ status: 'queued' });
    const [s] = await events('agent.notification.suppressed');
    expect(s?.redacted_summary).toMatchObject({ reason: 'no_delivery_engine', destinations: ['phone'] });
  });

  it('takes the task from X-Switchboard-Task for a general agent key', async () => {
    await start();
    await post(
      { stage: 'failed', summary: 'x' },
      { ...auth('agent'), 'x-switchboard-task': 'tsk_01JABCDEFGHJKMNPQRSTVWXYZ0' },
    );
    const [e] = await events('agent.progress.reported');
    expect(e?.execution.task_id).toBe('tsk_01JABCDEFGHJKMNPQRSTVWXYZ0');
  });

  it('answers 404 for a task the tasks module does not know, and takes the owner from a task it knows', async () => {
    const { seen } = await start({ routes: [{ match: 'owner == "ana"', channels: ['phone'] }] });
    const task = { id: 'tsk_known', owner: 'ana', title: 'Fix the flaky test', correlation_id: 'cor_1' };
    const touched: string[] = [];
    t!.provide(tasksPort, {
      get: async (id: string) => (id === task.id ? (task as unknown as TaskView) : undefined),
      touch: async (id: string) => {
        touched.push(id);
      },
      launch: async () => {
        throw new Error('unused');
      },
      resume: async () => {
        throw new Error('unused');
      },
    });
    const unknown = await post(
      { stage: 'failed', summary: 'x' },
      { ...auth('agent'), 'x-switchboard-task': 'tsk_nope' },
    );
    expect(unknown.status).toBe(404);
    const known = await post(
      { stage: 'failed', summary: 'x' },
      { ...auth('agent'), 'x-switchboard-task': 'tsk_known' },
    );
    expect(await known.json()).toMatchObject({ status: 'sent' });
    expect(seen[0]?.message).toMatchObject({
      title: 'Fix the flaky test',
      task: { id: 'tsk_known', name: 'Fix the flaky test' },
    });
    expect(touched).toEqual(['tsk_known']);
    const [e] = await events('agent.progress.reported');
    expect(e?.correlation_id).toBe('cor_1');
  });

  it('refuses a task header that contradicts a task-bound key', async () => {
    const { services } = await start();
    services.keys.add('task-bound-key-0123456789', { name: 'launched', role: 'agent', task_id: 'tsk_A' });
    const res = await post(
      { stage: 'failed', summary: 'x' },
      { authorization: 'Bearer task-bound-key-0123456789', 'x-switchboard-task': 'tsk_B' },
    );
    expect(res.status).toBe(403);
    const ok = await post(
      { stage: 'failed', summary: 'x' },
      { authorization: 'Bearer task-bound-key-0123456789' },
    );
    expect(ok.status).toBe(200);
    const [e] = await events('agent.progress.reported');
    expect(e?.execution.task_id).toBe('tsk_A');
  });

  it.each([
    ['a smuggled recipient field', { stage: 'done', summary: 'x', to: 'ceo@example.com' }],
    ['a smuggled channel', { stage: 'done', summary: 'x', channel: 'phone' }],
    ['a smuggled chat id', { stage: 'done', summary: 'x', chat_id: '123' }],
    ['a summary of 121 characters', { stage: 'done', summary: 'x'.repeat(121) }],
    ['an unknown stage', { stage: 'halfway', summary: 'x' }],
    ['an unknown severity', { stage: 'done', summary: 'x', severity: 'urgent' }],
    ['a missing summary', { stage: 'done' }],
    ['a number for a summary', { stage: 'done', summary: 5 }],
    ['an array body', [1]],
  ])('rejects %s with 400 validation_failed', async (_name, body) => {
    const { seen } = await start();
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'validation_failed' } });
    // Nothing of the refused call is sent; a recipient attempt only alerts the owner (recipients.test.ts).
    const alerts = seen.filter((d) => JSON.stringify(d).includes('tried to choose recipients'));
    expect(seen).toHaveLength(alerts.length);
    expect(JSON.stringify(seen)).not.toMatch(/ceo@example\.com|"summary":"x"/);
  });

  it('accepts a summary of exactly 120 characters', async () => {
    await start();
    expect((await post({ stage: 'failed', summary: 'x'.repeat(120) })).status).toBe(200);
  });

  it('rejects malformed JSON, a wrong content type, an oversized body, a missing key and the wrong role', async () => {
    await start();
    expect((await post('{"stage":')).status).toBe(400);
    const text = await t!.app.request('/v1/progress', {
      method: 'POST',
      headers: { ...auth('agent'), 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(text.status).toBe(415);
    const big = await post({ stage: 'done', summary: 'x', detail: 'y'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect((await post({ stage: 'done', summary: 'x' }, {})).status).toBe(401);
    expect((await post({ stage: 'done', summary: 'x' }, auth('approver'))).status).toBe(403);
    expect((await post({ stage: 'done', summary: 'x' }, auth('admin'))).status).toBe(403);
  });

  it('sends to the fallback channel once, after the configured number of failed attempts', async () => {
    const { services, seen } = await start({
      routes: [{ match: 'true', channels: ['phone'], fallback: ['partner'], fallback_after: 2 }],
    });
    services.relay.start();
    await post({ stage: 'failed', summary: 'prod deploy failed' });
    expect(seen.map((s) => s.destination)).toEqual(['phone']);
    const failure = (
      attempt: number,
      type: 'integration.delivery.failed' | 'integration.delivery.dead' = 'integration.delivery.failed',
    ) =>
      services.emit({
        type,
        causation_id: seen[0]!.eventId,
        subject: { resource_ref: 'dlv_1' },
        redacted_summary: { attempt, outcome: 'retry' },
      });
    await failure(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toHaveLength(1);
    await failure(2);
    for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(seen[1]).toMatchObject({ destination: 'partner', priority: 'high' });
    expect(seen[1]?.message).toMatchObject({ summary: 'prod deploy failed', stage: 'failed' });
    await failure(3);
    await failure(4, 'integration.delivery.dead');
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toHaveLength(2);
    const sent = await events('agent.notification.sent');
    expect(sent.at(-1)?.redacted_summary).toMatchObject({
      destinations: ['partner'],
      fallback_for: { destination: 'phone', delivery_id: 'dlv_1' },
    });
  });

  it('announces a requested approval on the priority lane, and a stalled task to its owner', async () => {
    const { services, seen } = await start();
    services.relay.start();
    await services.emit({
      type: 'agent.approval.requested',
      actor: { agent_id: 'bot' },
      execution: { task_id: 'tsk_1' },
      redacted_summary: {
        approval_id: 'apr_01JABCDEFGHJKMNPQRSTVWXYZ0',
        action: 'deploy to prod',
        reason: 'release',
        expires_at: '2027-01-01T00:00:00.000Z',
      },
    });
    await services.emit({
      type: 'agent.task.stalled',
      execution: { task_id: 'tsk_1' },
      redacted_summary: { quiet_seconds: 300 },
    });
    for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const approval = seen.find((s) => s.message.kind === 'approval');
    expect(approval).toMatchObject({ priority: 'high', destination: 'phone' });
    expect(approval?.message).toMatchObject({ stage: 'awaiting_approval', summary: 'deploy to prod' });
    const stalled = seen.find((s) => s.message.kind === 'alert');
    expect(stalled?.message.summary).toContain('5 minutes');
  });

  it('masks a secret and strips mass mentions in the action and reason an agent gave its approval', async () => {
    const { services, seen } = await start();
    services.relay.start();
    await services.emit({
      type: 'agent.approval.requested',
      actor: { agent_id: 'bot' },
      execution: { task_id: 'tsk_1' },
      redacted_summary: {
        approval_id: 'apr_01JABCDEFGHJKMNPQRSTVWXYZ1',
        action: 'use key ghp_0123456789abcdefghijklmnopqrstuvwxyzAB @everyone',
        reason: 'needs AKIAIOSFODNN7EXAMPLE',
        expires_at: '2027-01-01T00:00:00.000Z',
      },
    });
    for (let i = 0; i < 100 && seen.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
    const text = JSON.stringify(seen.find((s) => s.message.kind === 'approval')?.message);
    expect(text).toBeTruthy();
    expect(text).not.toContain('ghp_0123456789abcdefghijklmnopqrstuvwxyzAB');
    expect(text).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(text).not.toContain('@everyone');
  });
});
