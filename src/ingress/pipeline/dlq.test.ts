import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { auth, type TestApp, testApp } from '../../server/testing.js';
import { coreModule } from '../../server/core-routes.js';
import type { LaunchRequest, TaskView } from '../../tasks/port.js';
import type { IngressModule } from '../module.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';
import { classify, type DlqEntry } from './dlq.js';
import { tasksPort } from '../../tasks/port.js';

/** A task service whose launches fail, as a runtime that cannot start would. */
class FailingTasks extends FakeTasks {
  override async launch(_req: LaunchRequest): Promise<TaskView> {
    throw new Error('spawn claude ENOENT');
  }
}

const LAUNCHING = {
  id: 'comment',
  source: 'github',
  when: 'event.name == "issue_comment"',
  action: { type: 'notify' },
};
const FETCHING = {
  id: 'pr-review',
  source: 'github',
  when: 'event.name == "pull_request"',
  // Nothing listens on port 9 of the loopback and it is allow-listed: every re-read fails.
  fetch: { type: 'github-pr', api_url: 'http://127.0.0.1:9' },
  action: { type: 'notify' },
};

describe('the DLQ classification', () => {
  it('reads the failed step from the last error', () => {
    expect(classify('fetch_failed: trigger x: the API answered 502')).toBe('fetch_failed');
    expect(classify('launch failed: spawn ENOENT')).toBe('launch_failed');
    expect(classify('the gateway stopped while launching its run')).toBe('launch_interrupted');
    expect(classify('SQLITE_BUSY')).toBe('admission_failed');
    expect(classify(null)).toBe('admission_failed');
  });
});

describe.each(await dialects())('GET /v1/ingress/dlq on %s', (dialect) => {
  let t: TestApp;
  let ingress: IngressModule;
  afterEach(async () => t?.cleanup());

  async function start(tasks: FakeTasks) {
    const h = ingressHarness([LAUNCHING, FETCHING]);
    ingress = h.ingress;
    t = await testApp({
      dialect,
      config: { ...h.config, egress: { allow: ['127.0.0.1'] } },
      modules: [coreModule(), h.ingress],
    });
    t.provide(tasksPort, tasks);
  }
  async function deliver(event: string, payload: unknown, delivery: string): Promise<number> {
    const d = await githubDelivery(event, payload, { delivery });
    return (await t.app.request('/v1/ingress/github', { method: 'POST', headers: d.headers, body: d.body }))
      .status;
  }
  const dlq = async (query = ''): Promise<DlqEntry[]> => {
    const res = await t.app.request(`/v1/ingress/dlq${query}`, { headers: auth('admin') });
    expect(res.status).toBe(200);
    return ((await res.json()) as { deliveries: DlqEntry[] }).deliveries;
  };

  it('lists a failed re-read and a failed launch with classification, attempts and last error', async () => {
    await start(new FailingTasks());
    expect(await deliver('pull_request', githubExample('pull_request', 'opened'), 'dlq-fetch')).toBe(202);
    expect(await deliver('issue_comment', githubExample('issue_comment', 'created'), 'dlq-launch')).toBe(202);
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(0);
    const entries = await dlq();
    expect(entries).toHaveLength(2);
    const fetch = entries.find((e) => e.delivery_id === 'dlq-fetch');
    expect(fetch).toMatchObject({
      source: 'github',
      event: 'pull_request',
      classification: 'fetch_failed',
      accepted: 1,
      last_error: expect.stringMatching(/^fetch_failed: trigger pr-review: the request failed/),
    });
    expect(fetch!.attempts).toBeGreaterThanOrEqual(1);
    expect(entries.find((e) => e.delivery_id === 'dlq-launch')).toMatchObject({
      classification: 'launch_failed',
      last_error: 'launch failed: spawn claude ENOENT',
    });
    expect(await dlq('?source=slack')).toHaveLength(0);
    expect(await dlq('?limit=1')).toHaveLength(1);
  });

  it('takes a delivery off the list once its replay is admitted and launched', async () => {
    const tasks = new FailingTasks();
    await start(tasks);
    await deliver('issue_comment', githubExample('issue_comment', 'created'), 'dlq-replay');
    await t.services.relay.drain();
    await ingress.launchDue();
    expect(await dlq()).toHaveLength(1);
    t.provide(tasksPort, new FakeTasks());
    const replay = await t.app.request('/v1/ingress/deliveries/dlq-replay/replay', {
      method: 'POST',
      headers: auth('admin'),
    });
    expect(replay.status).toBe(202);
    await t.services.relay.drain();
    expect(await ingress.launchDue()).toBe(1);
    expect(await dlq()).toHaveLength(0);
  });

  it('refuses a malformed limit and any role but admin', async () => {
    await start(new FakeTasks());
    for (const q of ['?limit=abc', '?limit=0', '?limit=5000', '?limit=-1'])
      expect((await t.app.request(`/v1/ingress/dlq${q}`, { headers: auth('admin') })).status, q).toBe(400);
    expect((await t.app.request('/v1/ingress/dlq', { headers: auth('agent') })).status).toBe(403);
    expect((await t.app.request('/v1/ingress/dlq', { headers: auth('approver') })).status).toBe(403);
    expect((await t.app.request('/v1/ingress/dlq')).status).toBe(401);
  });
});
