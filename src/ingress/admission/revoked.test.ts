import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../../envelope/index.js';
import { notifyModule } from '../../notify/module.js';
import { outboundPort } from '../../notify/port.js';
import { recordingDeliveries } from '../../notify/testing.js';
import { coreModule } from '../../server/core-routes.js';
import { type TestApp, testApp } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { tasksPort } from '../../tasks/port.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';

const TOKEN_ENV = 'SB_TEST_REVOKED_GITHUB_TOKEN';

/**
 * A stand-in for the GitHub REST API on 127.0.0.1: a revoked token gets what GitHub answers, 401 with
 * `{"message":"Bad credentials"}`; once `valid` it serves the PR.
 */
const api = { valid: false, server: undefined as Server | undefined, url: '' };

beforeAll(async () => {
  api.server = createServer((req, res) => {
    if (!api.valid || req.headers.authorization !== 'Bearer ghs_revoked_then_replaced') {
      res.writeHead(401, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
          status: '401',
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ state: 'open', merged: false, number: 2, head: { sha: 'feedbeef03' } }));
  });
  await new Promise<void>((r) => api.server!.listen(0, '127.0.0.1', () => r()));
  api.url = `http://127.0.0.1:${(api.server!.address() as AddressInfo).port}`;
  process.env[TOKEN_ENV] = 'ghs_revoked_then_replaced';
});
afterAll(async () => {
  delete process.env[TOKEN_ENV];
  await new Promise((r) => api.server?.close(r));
});

/** Issue 20 point 7: a credential revoked at the provider marks the source revoked, stops tasks, alerts. */
describe.each(await dialects())('a credential revoked at the provider on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    api.valid = false;
    await t?.cleanup();
    t = undefined;
  });

  it('marks the source revoked on a 401 re-read, derives nothing from it, alerts once, and recovers', async () => {
    const h = ingressHarness([
      {
        id: 'pr-review',
        source: 'github',
        when: 'event.name == "pull_request"',
        fetch: { type: 'github-pr', api_url: api.url, token_env: TOKEN_ENV },
        action: { type: 'notify' },
      },
    ]);
    t = await testApp({
      dialect,
      config: {
        ...h.config,
        egress: { allow: ['127.0.0.1'] },
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
      },
      modules: [coreModule(), h.ingress, notifyModule()],
    });
    t.provide(tasksPort, new FakeTasks());
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    const events = async (type: string): Promise<Envelope[]> =>
      (await t!.services.log.list({ type, limit: 100 })).map((e) => e.envelope);
    const deliver = async () => {
      const d = await githubDelivery('pull_request', githubExample('pull_request', 'opened'));
      const res = await t!.app.request('/v1/ingress/github', {
        method: 'POST',
        headers: d.headers,
        body: d.body,
      });
      expect(res.status).toBe(202);
      await t!.services.relay.drain();
    };

    await deliver();
    await deliver();
    const dropped = await events('integration.webhook.dropped');
    expect(dropped.map((e) => e.redacted_summary.reason)).toEqual([
      'credential_revoked',
      'credential_revoked',
    ]);
    expect(dropped[0]?.redacted_summary).toMatchObject({
      reason: 'credential_revoked',
      trigger: null,
      trigger_refused: 'pr-review',
    });
    const revoked = await events('integration.credential.revoked');
    expect(revoked).toHaveLength(1);
    expect(revoked[0]?.redacted_summary).toEqual({
      source: 'github',
      trigger: 'pr-review',
      reason: `the API answered 401 to the token in $${TOKEN_ENV}`,
    });
    const [row] = await t.services.db.query<{ status: string }>({
      text: 'SELECT status FROM ingress_integrations',
    });
    expect(row?.status).toBe('revoked');
    expect(await events('integration.webhook.admitted')).toHaveLength(0);
    const alerts = deliveries.seen.filter((d) => d.priority === 'high');
    expect(alerts).toHaveLength(1);
    expect(String(alerts[0]?.message.summary)).toContain('Source github: its credential was revoked');
    // Both deliveries are stored (processed), so a replay after the fix can still run them.
    const stored = await t.services.db.query<{ status: string }>({
      text: 'SELECT status FROM ingress_deliveries',
    });
    expect(stored.map((s) => s.status)).toEqual(['processed', 'processed']);

    api.valid = true;
    await deliver();
    expect(await events('integration.credential.restored')).toHaveLength(1);
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    expect(await t.services.db.query({ text: 'SELECT source FROM ingress_integrations' })).toEqual([]);
  });
});
