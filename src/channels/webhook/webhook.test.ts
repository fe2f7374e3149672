import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, NOW, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { webhook } from './index.js';

// Vector 2a's secret (signature_vectors.md): the receiver verifies with the reference library.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const data = (r: HttpRequest) => JSON.parse(r.body).data as Record<string, unknown>;

channelCase({
  kind: webhook,
  rawConfig: { type: 'webhook', url: 'https://example.com/hook', secret_env: 'HOOK_SECRET' },
  secrets: { HOOK_SECRET: SECRET },
  text: (r) => String(data(r)['text']),
  wire: (r) => r.body,
  responses: {
    ok: response(204, ''),
    business: response(410, 'gone'),
    businessExpect: 'dead',
    rateLimited: response(429, '', { 'retry-after': '60' }),
    rateLimitedRetryAfterMs: 60_000,
    serverError: response(504, ''),
  },
});

/** A Standard Webhooks consumer: verify with the reference library (±5 min), then de-duplicate on webhook-id. */
function consumer(seen: Set<string>) {
  return (req: ReceivedRequest): Answer => {
    try {
      new Webhook(SECRET).verify(req.body, req.headers);
    } catch {
      return json(401, { error: 'bad signature' });
    }
    const id = req.headers['webhook-id'] ?? '';
    if (seen.has(id)) return json(200, { duplicate: true });
    seen.add(id);
    return json(202, { accepted: true });
  };
}

describe('webhook against a Standard Webhooks consumer', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const config = (url: string) =>
    webhook.configSchema.parse({ type: 'webhook', url, secret_env: 'HOOK_SECRET' });

  it('signs the exact body so the reference library verifies it, with the event id as webhook-id', async () => {
    rx = await startReceiver(consumer(new Set()));
    const res = await webhook.send(approvalMessage(), config(rx.url), {
      post: fetchPost,
      now: Date.now,
      secret: () => SECRET,
    });
    expect(res).toEqual({ kind: 'ok' });
    const got = rx.requests[0];
    expect(got?.headers['webhook-id']).toBe('evt_01JDZ3R5W8XK2M4N6P8Q0S2T4V');
    const body = JSON.parse(got?.body ?? '{}');
    expect(body).toMatchObject({
      type: 'agent.approval.requested',
      data: { approval: { id: 'apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V' } },
    });
    expect(got?.body).not.toContain('one-time-approve');
  });

  it('is refused by the consumer when signed ten minutes in the past', async () => {
    rx = await startReceiver(consumer(new Set()));
    const res = await webhook.send(sampleMessage(), config(rx.url), {
      post: fetchPost,
      now: () => Date.now() - 600_000,
      secret: () => SECRET,
    });
    expect(res).toMatchObject({ kind: 'dead', reason: expect.stringContaining('401') });
  });

  it('is dead, naming only the variable, when the secret is not a whsec_ value', async () => {
    const res = await webhook.send(sampleMessage(), config('https://example.com/hook'), {
      post: fetchPost,
      now: () => NOW,
      secret: () => 'not base64 !!',
    });
    expect(res).toEqual({
      kind: 'dead',
      reason: 'HOOK_SECRET: webhook secret is not "whsec_" followed by base64',
    });
  });
});

describe('webhook status_url', () => {
  const parse = (status_url: string) =>
    webhook.configSchema.safeParse({
      type: 'webhook',
      url: 'https://example.com/hook',
      secret_env: 'HOOK_SECRET',
      status_url,
    });
  it('takes a URL template with {event_id}, and refuses one without it or with credentials', () => {
    expect(parse('https://example.com/deliveries/{event_id}').success).toBe(true);
    const missing = parse('https://example.com/deliveries');
    expect(missing.success).toBe(false);
    expect(JSON.stringify(missing.error?.issues)).toContain('must contain {event_id}');
    expect(parse('https://user:pw@example.com/{event_id}').success).toBe(false);
    expect(parse('ftp://example.com/{event_id}').success).toBe(false);
  });
});
