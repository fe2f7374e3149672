import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { KEYS, type TestApp, testApp } from '../../server/testing.js';
import type { Envelope } from '../../envelope/index.js';
import { coreModule } from '../../server/core-routes.js';
import { tasksPort } from '../../tasks/port.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';

const PARTNER_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const GITLAB_TOKEN = 'gitlab-order-token';

const TRIGGERS = [
  { id: 'pr', source: 'github', when: 'event.name == "pull_request"', action: { type: 'notify' } },
  { id: 'mr', source: 'gitlab', action: { type: 'notify' } },
  { id: 'partner', source: 'partner', action: { type: 'notify' } },
];

/** A merge request hook as GitLab's webhook docs show it, trimmed to the fields ordering reads. */
function gitlabMergeRequest(updatedAt: string, iid = 1): Record<string, unknown> {
  return {
    object_kind: 'merge_request',
    event_type: 'merge_request',
    user: { id: 1, name: 'Administrator', username: 'root' },
    project: { id: 1, name: 'Gitlab Test', path_with_namespace: 'gitlabhq/gitlab-test' },
    object_attributes: {
      id: 99,
      iid,
      title: 'MS-Viewport',
      state: 'opened',
      action: 'update',
      created_at: '2013-12-03T17:23:34Z',
      updated_at: updatedAt,
    },
  };
}

describe.each(await dialects())('ordering by resource revision on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.cleanup());

  async function start() {
    const h = ingressHarness(TRIGGERS);
    const sources = h.config.sources as Record<string, unknown>;
    sources.gitlab = { type: 'gitlab', secret: GITLAB_TOKEN };
    sources.partner = { type: 'standard-webhooks', secret: PARTNER_SECRET };
    t = await testApp({ dialect, config: h.config, modules: [coreModule(), h.ingress] });
    t.provide(tasksPort, new FakeTasks());
  }
  const events = async (type: string): Promise<Envelope[]> =>
    (await t.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);
  const post = (source: string, headers: Record<string, string>, body: string) =>
    t.app.request(`/v1/ingress/${source}`, { method: 'POST', headers, body });

  function pullRequest(updatedAt: string, sha: string): Record<string, unknown> {
    const p = githubExample('pull_request', 'synchronize');
    const pr = p.pull_request as Record<string, unknown>;
    pr.updated_at = updatedAt;
    pr.head = { ...(pr.head as Record<string, unknown>), sha };
    return p;
  }
  async function github(payload: unknown): Promise<string> {
    const d = await githubDelivery('pull_request', payload);
    const res = await post('github', d.headers, d.body);
    expect(res.status).toBe(202);
    return ((await res.json()) as { id: string }).id;
  }

  it('drops a GitHub pull_request event older than the one admitted before it, and records why', async () => {
    await start();
    const newer = await github(pullRequest('2026-12-01T10:00:05Z', 'bbb'));
    await t.services.relay.drain();
    const older = await github(pullRequest('2026-12-01T10:00:01Z', 'aaa'));
    await t.services.relay.drain();
    const admitted = await events('integration.webhook.admitted');
    expect(admitted.map((e) => e.causation_id)).toEqual([newer]);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.causation_id).toBe(older);
    expect(dropped?.redacted_summary).toMatchObject({
      trigger: null,
      reason: 'out_of_order',
      resource: 'pull_request:Codertocat/Hello-World#2',
      revision: '2026-12-01T10:00:01.000Z',
      last_revision: '2026-12-01T10:00:05.000Z',
      last_event_id: newer,
      tag: 'aaa',
      last_tag: 'bbb',
    });
    const [accepted] = await events('integration.webhook.accepted');
    expect(accepted?.redacted_summary.revision).toMatchObject({ at: '2026-12-01T10:00:05.000Z', tag: 'bbb' });
  });

  it('admits an event stamped in the same second as the last, a newer one, and another pull request', async () => {
    await start();
    const other = pullRequest('2026-12-01T09:00:00Z', 'zzz');
    other.number = 3;
    (other.pull_request as Record<string, unknown>).number = 3;
    const sent = [
      pullRequest('2026-12-01T10:00:05Z', 'bbb'),
      pullRequest('2026-12-01T10:00:05Z', 'bbb'),
      pullRequest('2026-12-01T10:00:09Z', 'ccc'),
      other,
    ];
    // Admission decides each in turn: the relay orders only within a correlation, not across deliveries.
    for (const p of sent) {
      await github(p);
      await t.services.relay.drain();
    }
    expect(await events('integration.webhook.admitted')).toHaveLength(4);
    expect(await events('integration.webhook.dropped')).toHaveLength(0);
  });

  it('leaves events without a revision (push) unordered', async () => {
    await start();
    for (let i = 0; i < 2; i++) {
      const d = await githubDelivery('push', githubExample('push'));
      expect((await post('github', d.headers, d.body)).status).toBe(202);
    }
    await t.services.relay.drain();
    const [accepted] = await events('integration.webhook.accepted');
    expect(accepted?.redacted_summary.revision).toBeUndefined();
    const dropped = await events('integration.webhook.dropped');
    expect(dropped.map((e) => e.redacted_summary.reason)).toEqual([
      'no_matching_trigger',
      'no_matching_trigger',
    ]);
  });

  it('a replay of an older delivery is admitted: a person asked for it', async () => {
    await start();
    const older = pullRequest('2026-12-01T10:00:01Z', 'aaa');
    const d = await githubDelivery('pull_request', older);
    await post('github', d.headers, d.body);
    await t.services.relay.drain();
    await github(pullRequest('2026-12-01T10:00:05Z', 'bbb'));
    await t.services.relay.drain();
    const res = await t.app.request(`/v1/ingress/deliveries/${d.delivery}/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.admin}` },
    });
    expect(res.status).toBe(202);
    await t.services.relay.drain();
    expect(await events('integration.webhook.admitted')).toHaveLength(3);
  });

  it('drops a GitLab merge request hook older than the last, by object_attributes.updated_at (both formats)', async () => {
    await start();
    const send = async (updatedAt: string, key: string) => {
      const res = await post(
        'gitlab',
        {
          'content-type': 'application/json',
          'x-gitlab-token': GITLAB_TOKEN,
          'x-gitlab-event': 'Merge Request Hook',
          'idempotency-key': key,
        },
        JSON.stringify(gitlabMergeRequest(updatedAt)),
      );
      expect(res.status).toBe(202);
      await t.services.relay.drain();
    };
    await send('2013-12-03 17:30:00 UTC', 'k1');
    await send('2013-12-03T17:23:34Z', 'k2');
    await t.services.relay.drain();
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({
      reason: 'out_of_order',
      resource: 'merge_request:1#1',
      revision: '2013-12-03T17:23:34.000Z',
      last_revision: '2013-12-03T17:30:00.000Z',
    });
  });

  it('drops a Standard Webhooks message for data.id older than the last, by the payload timestamp', async () => {
    await start();
    const wh = new Webhook(PARTNER_SECRET);
    const send = async (id: string, occurred: string) => {
      const body = JSON.stringify({ type: 'invoice.updated', timestamp: occurred, data: { id: 'in_42' } });
      const now = new Date();
      const headers = {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': wh.sign(id, now, body),
      };
      expect((await post('partner', headers, body)).status).toBe(202);
      await t.services.relay.drain();
    };
    await send('msg_2', '2026-12-01T10:00:05Z');
    await send('msg_1', '2026-12-01T10:00:01Z');
    await t.services.relay.drain();
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({ reason: 'out_of_order', resource: 'in_42' });
  });
});
