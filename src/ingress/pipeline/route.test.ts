import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { auth, type TestApp, testApp } from '../../server/testing.js';
import { coreModule } from '../../server/core-routes.js';
import { GITHUB_SECRET, githubDelivery, githubExample, ingressHarness, slackRequest } from '../testing.js';

describe.each(await dialects())('POST /v1/ingress/:source on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.cleanup());

  async function start(triggers: unknown[] = []) {
    const h = ingressHarness(triggers);
    t = await testApp({ dialect, config: h.config, modules: [coreModule(), h.ingress] });
    return h;
  }
  const post = (source: string, headers: Record<string, string>, body: string | Uint8Array) =>
    t.app.request(`/v1/ingress/${source}`, { method: 'POST', headers, body });
  const events = async (type: string) =>
    (await t.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);

  it('accepts a signed GitHub delivery with 202, seals the raw body and appends the accepted event', async () => {
    await start();
    const payload = githubExample('pull_request', 'opened');
    const d = await githubDelivery('pull_request', payload);
    const res = await post('github', d.headers, d.body);
    expect(res.status).toBe(202);
    const json = (await res.json()) as { id: string; status: string };
    expect(json.status).toBe('accepted');
    const [accepted] = await events('integration.webhook.accepted');
    expect(accepted?.event_id).toBe(json.id);
    expect(accepted?.redacted_summary).toMatchObject({
      source: 'github',
      source_type: 'github',
      event: 'pull_request',
      delivery_id: d.delivery,
      action: 'opened',
      binding: { repository: 'Codertocat/Hello-World' },
    });
    // The summary carries no free text: the PR title and body stay in the vault.
    expect(JSON.stringify(accepted?.redacted_summary)).not.toContain('Update the README');
    const sealed = await t.services.vault.get(accepted!.payload_ref!);
    expect(sealed?.toString('utf8')).toBe(d.body);
    const rows = await t.services.db.query<{ status: string }>({
      text: 'SELECT status FROM ingress_deliveries WHERE delivery_id = $1',
      values: [d.delivery],
    });
    expect(rows).toEqual([{ status: 'accepted' }]);
  });

  it('answers the same delivery again with 200 duplicate and keeps one record', async () => {
    await start();
    const d = await githubDelivery('push', githubExample('push'));
    expect((await post('github', d.headers, d.body)).status).toBe(202);
    const again = await post('github', d.headers, d.body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'duplicate' });
    expect(await events('integration.webhook.accepted')).toHaveLength(1);
    const vault = await t.services.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM vault' });
    expect(Number(vault[0]?.n)).toBe(1);
  });

  it('accepts a redelivery again when admission of the first one failed', async () => {
    await start();
    const d = await githubDelivery('push', githubExample('push'));
    const first = (await (await post('github', d.headers, d.body)).json()) as { id: string };
    await t.services.db.query({
      text: `UPDATE ingress_deliveries SET status = 'failed' WHERE event_id = $1`,
      values: [first.id],
    });
    const again = await post('github', d.headers, d.body);
    expect(again.status).toBe(202);
    expect(((await again.json()) as { id: string }).id).not.toBe(first.id);
  });

  it('refuses a bad signature with 401 and records the reason without the payload', async () => {
    await start();
    const d = await githubDelivery('push', githubExample('push'), { secret: `${GITHUB_SECRET}-wrong` });
    const res = await post('github', d.headers, d.body);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_signature');
    const [rejected] = await events('integration.webhook.rejected');
    expect(rejected?.redacted_summary).toEqual({
      source: 'github',
      source_type: 'github',
      reason: 'bad_signature',
    });
    expect(rejected?.payload_ref).toBeNull();
    expect(await events('integration.webhook.accepted')).toHaveLength(0);
  });

  it('refuses a missing signature with 401', async () => {
    await start();
    const d = await githubDelivery('push', githubExample('push'));
    const { 'x-hub-signature-256': _dropped, ...headers } = d.headers;
    expect((await post('github', headers, d.body)).status).toBe(401);
  });

  it('answers an authentic body that is not JSON with 400 bad_request', async () => {
    await start();
    const d = await githubDelivery('push', 'x');
    const body = '{not json';
    const { sign } = await import('@octokit/webhooks-methods');
    const res = await post(
      'github',
      { ...d.headers, 'x-hub-signature-256': await sign(GITHUB_SECRET, body) },
      body,
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_request');
  });

  it('refuses a body over the limit with 413 before verifying it', async () => {
    await start();
    const d = await githubDelivery('push', { pad: 'x'.repeat(300 * 1024) });
    const res = await post('github', d.headers, d.body);
    expect(res.status).toBe(413);
    const [rejected] = await events('integration.webhook.rejected');
    expect(rejected?.redacted_summary).toMatchObject({ reason: 'payload_too_large' });
  });

  it('refuses a non-JSON content type with 415', async () => {
    await start();
    const d = await githubDelivery('push', githubExample('push'));
    const res = await post('github', { ...d.headers, 'content-type': 'text/plain' }, d.body);
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
  });

  it('accepts a GitHub form-mode delivery, which the verifier reads', async () => {
    await start();
    const body = `payload=${encodeURIComponent(JSON.stringify(githubExample('push')))}`;
    const { sign } = await import('@octokit/webhooks-methods');
    const res = await post(
      'github',
      {
        'content-type': 'application/x-www-form-urlencoded',
        'x-github-event': 'push',
        'x-github-delivery': 'form-1',
        'x-hub-signature-256': await sign(GITHUB_SECRET, body),
      },
      body,
    );
    expect(res.status).toBe(202);
  });

  it('answers an unknown source with 404 unknown_source and records nothing', async () => {
    await start();
    const d = await githubDelivery('push', githubExample('push'));
    const res = await post('nope', d.headers, d.body);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unknown_source');
    expect(await events('integration.webhook.rejected')).toHaveLength(0);
  });

  it('answers the Slack url_verification challenge and admits nothing', async () => {
    await start();
    const body = JSON.stringify({ token: 't', challenge: 'c-123', type: 'url_verification' });
    const res = await post('slack', slackRequest(body, t.services.now()), body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: 'c-123' });
    expect(await events('integration.webhook.accepted')).toHaveLength(0);
  });

  it('accepts a signed Slack interactivity form', async () => {
    await start();
    const inner = { type: 'block_actions', trigger_id: 'tr-1', team: { id: 'T1' }, user: { id: 'U1' } };
    const body = `payload=${encodeURIComponent(JSON.stringify(inner))}`;
    const res = await post(
      'slack',
      slackRequest(body, t.services.now(), 'application/x-www-form-urlencoded'),
      body,
    );
    expect(res.status).toBe(202);
  });

  it('refuses a Slack request signed with a stale timestamp with 401', async () => {
    await start();
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'message' } });
    const res = await post('slack', slackRequest(body, t.services.now() - 10 * 60_000), body);
    expect(res.status).toBe(401);
    const [rejected] = await events('integration.webhook.rejected');
    expect(rejected?.redacted_summary).toMatchObject({ source: 'slack', reason: 'timestamp_too_old' });
  });

  it('binds deliveries to the tenant the source names', async () => {
    const h = ingressHarness();
    (h.config.sources as Record<string, Record<string, unknown>>).github!.tenant = 'acme';
    t = await testApp({ dialect, config: h.config, modules: [coreModule(), h.ingress] });
    const d = await githubDelivery('push', githubExample('push'));
    expect((await post('github', d.headers, d.body)).status).toBe(202);
    const [accepted] = await events('integration.webhook.accepted');
    expect(accepted?.tenant_id).toBe('acme');
  });

  it('does not ask for a bearer key on ingress, but does on replay', async () => {
    await start();
    const res = await t.app.request('/v1/ingress/deliveries/x/replay', {
      method: 'POST',
      headers: auth('agent'),
    });
    expect(res.status).toBe(403);
    const none = await t.app.request('/v1/ingress/deliveries/x/replay', { method: 'POST' });
    expect(none.status).toBe(401);
  });
});
