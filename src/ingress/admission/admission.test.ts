import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { auth, type TestApp, testApp } from '../../server/testing.js';
import type { Envelope } from '../../envelope/index.js';
import { coreModule } from '../../server/core-routes.js';
import type { IngressModule } from '../module.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';
import { depthMarker } from './loop.js';
import { tasksPort } from '../../tasks/port.js';
import { gatePort } from '../../gate/port.js';

const PR_TRIGGER = {
  id: 'pr-review',
  source: 'github',
  when: 'event.name == "pull_request" && payload.action == "synchronize"',
  coalesce: { key: 'payload.repository.full_name + "#" + string(payload.number)', window: '10s' },
  action: { type: 'command', command: ['claude', '-p', 'review the PR'] },
};

const COMMENT_TRIGGER = {
  id: 'comment',
  source: 'github',
  when: 'event.name == "issue_comment" && payload.action == "created"',
  action: { type: 'notify' },
};

describe.each(await dialects())('admission on %s', (dialect) => {
  let t: TestApp;
  let ingress: IngressModule;
  let tasks: FakeTasks;
  let clock = Date.now();
  afterEach(async () => t?.cleanup());

  async function start(
    triggers: unknown[],
    opts: {
      loop?: { bot_logins?: string[]; max_depth?: number; tenant_runs_per_day?: number };
      tasks?: boolean;
    } = {},
  ) {
    clock = Date.now();
    const h = ingressHarness(triggers, opts.loop ? { loop: opts.loop } : {});
    ingress = h.ingress;
    t = await testApp({
      dialect,
      config: h.config,
      modules: [coreModule(), h.ingress],
      now: () => clock,
    });
    tasks = new FakeTasks();
    if (opts.tasks !== false) t.provide(tasksPort, tasks);
  }
  async function deliver(event: string, payload: unknown, delivery?: string): Promise<Response> {
    const d = await githubDelivery(event, payload, delivery ? { delivery } : {});
    return t.app.request('/v1/ingress/github', { method: 'POST', headers: d.headers, body: d.body });
  }
  const events = async (type: string): Promise<Envelope[]> =>
    (await t.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);
  const synchronize = (n: number) => {
    const p = githubExample('pull_request', 'synchronize');
    (p.pull_request as Record<string, unknown>).head = { sha: `sha-${n}` };
    return p;
  };

  it('coalesces five pushes to one PR inside the window into one run, then queues one follow-up, newest wins', async () => {
    await start([PR_TRIGGER]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(((await (await deliver('pull_request', synchronize(i))).json()) as { id: string }).id);
    await t.services.relay.drain();
    const [first] = await events('integration.webhook.admitted');
    const admittedCause = first?.causation_id;
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    const coalesced = await events('integration.webhook.coalesced');
    expect(coalesced).toHaveLength(4);
    // Each delivery that did not open the run is recorded as coalesced, caused by itself.
    expect(new Set(coalesced.map((e) => e.causation_id))).toEqual(
      new Set(ids.filter((id) => id !== admittedCause)),
    );
    expect(coalesced[0]?.redacted_summary).toMatchObject({ key: 'Codertocat/Hello-World#2' });

    expect(await ingress.launchDue()).toBe(0); // the window is still open
    clock += 10_001;
    expect(await ingress.launchDue()).toBe(1);
    expect(tasks.launched[0]?.req.cause.event_id).toBe(ids[4]);
    expect(tasks.launched[0]?.req.trusted).toMatchObject({
      trigger_id: 'pr-review',
      repository: 'Codertocat/Hello-World',
    });
    expect(tasks.launched[0]?.req.untrusted.text).toContain('sha-4');

    // While the run is active, three more pushes leave exactly one follow-up carrying the newest.
    const later: string[] = [];
    for (let i = 5; i < 8; i++)
      later.push(((await (await deliver('pull_request', synchronize(i))).json()) as { id: string }).id);
    await t.services.relay.drain();
    const admitted = await events('integration.webhook.admitted');
    expect(admitted).toHaveLength(2);
    expect(admitted[1]?.redacted_summary).toMatchObject({ waits_for_active: true });
    clock += 10_001;
    expect(await ingress.launchDue()).toBe(0); // the key's run is still active

    await t.services.emit({
      type: 'agent.task.completed',
      execution: { task_id: tasks.launched[0]!.task.id },
    });
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
    expect(tasks.launched).toHaveLength(2);
    expect(tasks.launched[1]?.req.cause.event_id).toBe(later[2]);
  });

  it('drops a comment carrying the depth marker at the limit, and admits one below it', async () => {
    await start([COMMENT_TRIGGER]);
    const atLimit = githubExample('issue_comment', 'created');
    (atLimit.comment as Record<string, unknown>).body = `Done.\n${depthMarker(3)}`;
    const below = githubExample('issue_comment', 'created');
    (below.comment as Record<string, unknown>).body = `Done.\n${depthMarker(2)}`;
    const first = (await (await deliver('issue_comment', atLimit)).json()) as { id: string };
    await deliver('issue_comment', below);
    await t.services.relay.drain();
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.causation_id).toBe(first.id);
    expect(dropped?.redacted_summary).toMatchObject({
      trigger: 'comment',
      reason: 'depth_limit',
      depth: 3,
      limit: 3,
    });
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    const [accepted] = await events('integration.webhook.accepted');
    expect(accepted?.lineage.depth).toBe(3);
  });

  it('drops events caused by a configured bot identity', async () => {
    await start([COMMENT_TRIGGER], { loop: { bot_logins: ['codertocat'] } });
    await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({ reason: 'bot_identity', actor: 'Codertocat' });
    expect(await events('integration.webhook.admitted')).toHaveLength(0);
  });

  it('drops with budget_per_day once the trigger used its launches for the day', async () => {
    await start([{ ...COMMENT_TRIGGER, budget: { per_day: 2 } }]);
    for (let i = 0; i < 3; i++) await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    expect(await events('integration.webhook.admitted')).toHaveLength(2);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({
      trigger: 'comment',
      reason: 'budget_per_day',
      limit: 2,
      used: 2,
    });
  });

  it('drops with budget_tenant_per_day once the tenant used its runs for the day, across triggers', async () => {
    await start([COMMENT_TRIGGER, { ...COMMENT_TRIGGER, id: 'comment-2' }], {
      loop: { tenant_runs_per_day: 3 },
    });
    for (let i = 0; i < 2; i++) await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    // Two deliveries × two triggers want four runs; the tenant may start three today.
    expect(await events('integration.webhook.admitted')).toHaveLength(3);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({ reason: 'budget_tenant_per_day', limit: 3, used: 3 });
  });

  it('launches nothing for a frozen tenant or trigger, failing the run with the reason', async () => {
    await start([COMMENT_TRIGGER]);
    const frozen = new Set(['comment']);
    t.provide(gatePort, {
      evaluate: async () => {
        throw new Error('unused');
      },
      frozen: async (agent) => agent !== null && frozen.has(agent),
    });
    await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(0);
    expect(tasks.launched).toEqual([]);
    const [run] = await t.services.db.query<{ state: string; error: string }>({
      text: 'SELECT state, error FROM ingress_runs',
    });
    expect(run).toMatchObject({ state: 'failed' });
    expect(run?.error).toContain('frozen');
    frozen.clear();
    await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
  });

  it('keeps runs waiting while the concurrency budget is full', async () => {
    await start([{ ...COMMENT_TRIGGER, budget: { concurrent: 1 } }]);
    await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
    expect(await ingress.launchDue()).toBe(0);
    await t.services.emit({ type: 'agent.task.failed', execution: { task_id: tasks.launched[0]!.task.id } });
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
  });

  it('fails a run orphaned in launching by a crash instead of launching it twice, and frees its key', async () => {
    await start([PR_TRIGGER]);
    await deliver('pull_request', synchronize(1));
    await t.services.relay.drain();
    await t.services.db.query({ text: `UPDATE ingress_runs SET state = 'launching'` });
    clock += 6 * 60_000;
    expect(await ingress.launchDue()).toBe(0);
    const runs = await t.services.db.query<{ state: string }>({ text: 'SELECT state FROM ingress_runs' });
    expect(runs).toEqual([{ state: 'failed' }]);
    const rows = await t.services.db.query<{ status: string }>({
      text: 'SELECT status FROM ingress_deliveries',
    });
    expect(rows).toEqual([{ status: 'failed' }]);
    await deliver('pull_request', synchronize(2));
    await t.services.relay.drain();
    clock += 10_001;
    expect(await ingress.launchDue()).toBe(1);
  });

  it('records the admission and leaves the run queued when no task service runs', async () => {
    await start([COMMENT_TRIGGER], { tasks: false });
    await deliver('issue_comment', githubExample('issue_comment', 'created'));
    await t.services.relay.drain();
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    expect(await ingress.launchDue()).toBe(0);
    t.provide(tasksPort, tasks);
    expect(await ingress.launchDue()).toBe(1);
  });

  it('records a verified delivery no trigger wants as dropped and marks it processed', async () => {
    await start([COMMENT_TRIGGER]);
    await deliver('push', githubExample('push'));
    await t.services.relay.drain();
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({ trigger: null, reason: 'no_matching_trigger' });
    const rows = await t.services.db.query<{ status: string }>({
      text: 'SELECT status FROM ingress_deliveries',
    });
    expect(rows).toEqual([{ status: 'processed' }]);
  });

  it('stores every 2xx delivery and admits each exactly once after the relay drains twice', async () => {
    await start([COMMENT_TRIGGER]);
    const delivered = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const id = `flood-${i}`;
      const res = await deliver('issue_comment', githubExample('issue_comment', 'created'), id);
      expect(res.status).toBe(202);
      delivered.add(id);
      if (i % 3 === 0)
        expect((await deliver('issue_comment', githubExample('issue_comment', 'created'), id)).status).toBe(
          200,
        );
    }
    await t.services.relay.drain();
    // An outbox row delivered a second time (a relay that died after the effect) must not admit again.
    const accepted = await events('integration.webhook.accepted');
    for (const e of accepted.slice(0, 4))
      await t.services.db.query({
        text: `INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at) VALUES ($1, 'bus', $2, 'pending', 0, 0, 0)`,
        values: [e.event_id, e.correlation_id],
      });
    await t.services.relay.drain();
    const rows = await t.services.db.query<{ delivery_id: string; status: string }>({
      text: 'SELECT delivery_id, status FROM ingress_deliveries',
    });
    expect(new Set(rows.map((r) => r.delivery_id))).toEqual(delivered);
    expect(rows.every((r) => r.status === 'processed')).toBe(true);
    const admitted = await events('integration.webhook.admitted');
    expect(admitted).toHaveLength(12);
    expect(new Set(admitted.map((e) => e.redacted_summary.delivery_id))).toEqual(delivered);
  });

  it('replays a stored delivery as new work under the current config', async () => {
    await start([COMMENT_TRIGGER]);
    await deliver('issue_comment', githubExample('issue_comment', 'created'), 'replay-me');
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
    const res = await t.app.request('/v1/ingress/deliveries/replay-me/replay', {
      method: 'POST',
      headers: auth('admin'),
    });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { id: string; replay_of: string };
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
    expect(tasks.launched).toHaveLength(2);
    expect(tasks.launched[1]?.req.cause.event_id).toBe(body.id);
    expect(tasks.launched[1]?.task.id).not.toBe(tasks.launched[0]?.task.id);
  });

  it('answers replay errors: unknown id 404, unknown field 400, malformed JSON 400, oversized 413', async () => {
    await start([COMMENT_TRIGGER]);
    const url = '/v1/ingress/deliveries/none/replay';
    const json = { ...auth('admin'), 'content-type': 'application/json' };
    expect((await t.app.request(url, { method: 'POST', headers: auth('admin') })).status).toBe(404);
    expect((await t.app.request(url, { method: 'POST', headers: json, body: '{"x":1}' })).status).toBe(400);
    expect((await t.app.request(url, { method: 'POST', headers: json, body: '{"source":5}' })).status).toBe(
      400,
    );
    expect((await t.app.request(url, { method: 'POST', headers: json, body: '{' })).status).toBe(400);
    const big = JSON.stringify({ source: 'x'.repeat(300 * 1024) });
    expect((await t.app.request(url, { method: 'POST', headers: json, body: big })).status).toBe(413);
  });

  it('purges payloads past retention and refuses to replay them', async () => {
    await start([COMMENT_TRIGGER]);
    await deliver('issue_comment', githubExample('issue_comment', 'created'), 'old');
    await t.services.relay.drain();
    clock += 31 * 86_400_000;
    expect(await ingress.purgeExpired()).toEqual({ payloads: 1, deliveries: 1 });
    const res = await t.app.request('/v1/ingress/deliveries/old/replay', {
      method: 'POST',
      headers: auth('admin'),
    });
    expect(res.status).toBe(404);
  });
});
