import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  parseWebhookSecret,
  signWebhook,
  signWebhookWithKeys,
  webhookTimestamp,
} from './sign.js';

// Published vectors, signature_vectors.md §2 (standard-webhooks@b2fa7b8).
const V2A = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const V2B = {
  secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  id: 'msg_27UH4WbU6Z5A5EzD8u03UvzRbpk',
  timestamp: 1649367553,
  body: '{"email":"test@example.com","username":"test_user"}',
  signature: 'v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=',
};

/** The reference library checks the timestamp against the real clock, so verify with a fresh one. */
function verifyNow(secret: string, headers: Record<string, string>, body: string): unknown {
  return new Webhook(secret).verify(body, headers);
}

describe('signWebhook', () => {
  it('reproduces the published vector 2a', () => {
    const h = signWebhook({ id: V2A.id, timestamp: V2A.timestamp, body: V2A.body, secrets: [V2A.secret] });
    expect(h).toEqual({
      'webhook-id': V2A.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': V2A.signature,
    });
  });

  it('reproduces the published vector 2b', () => {
    const h = signWebhook({ id: V2B.id, timestamp: V2B.timestamp, body: V2B.body, secrets: [V2B.secret] });
    expect(h['webhook-signature']).toBe(V2B.signature);
  });

  it('gives the same signature for a bare base64 secret (vector 2d)', () => {
    const bare = V2A.secret.slice('whsec_'.length);
    const h = signWebhook({ id: V2A.id, timestamp: V2A.timestamp, body: V2A.body, secrets: [bare] });
    expect(h['webhook-signature']).toBe(V2A.signature);
  });

  it('signs bytes exactly as it signs the same text', () => {
    const h = signWebhook({
      id: V2A.id,
      timestamp: V2A.timestamp,
      body: Buffer.from(V2A.body),
      secrets: [V2A.secret],
    });
    expect(h['webhook-signature']).toBe(V2A.signature);
  });

  it('agrees with the reference library’s own sign()', () => {
    const secret = generateWebhookSecret();
    const ts = webhookTimestamp(Date.now());
    const body = JSON.stringify({ type: 'agent.progress.reported', data: { summary: 'héllo ✓' } });
    const ours = signWebhook({ id: 'evt_01JABC', timestamp: ts, body, secrets: [secret] });
    const theirs = new Webhook(secret).sign('evt_01JABC', new Date(ts * 1000), body);
    expect(ours['webhook-signature']).toBe(theirs);
  });

  it('is verified by the reference library', () => {
    const secret = generateWebhookSecret();
    const body = '{"hello":"world"}';
    const headers = signWebhook({
      id: 'dlv_1',
      timestamp: webhookTimestamp(Date.now()),
      body,
      secrets: [secret],
    });
    expect(verifyNow(secret, { ...headers }, body)).toEqual({ hello: 'world' });
  });

  it('carries one signature per secret during key rotation, and each key verifies', () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const body = '{"n":1}';
    const headers = signWebhook({
      id: 'dlv_2',
      timestamp: webhookTimestamp(Date.now()),
      body,
      secrets: [newSecret, oldSecret],
    });
    const entries = headers['webhook-signature'].split(' ');
    expect(entries).toHaveLength(2);
    expect(entries.every((e) => e.startsWith('v1,'))).toBe(true);
    expect(verifyNow(oldSecret, { ...headers }, body)).toEqual({ n: 1 });
    expect(verifyNow(newSecret, { ...headers }, body)).toEqual({ n: 1 });
    expect(() => verifyNow(generateWebhookSecret(), { ...headers }, body)).toThrow();
  });

  it('does not verify once the body changes by one byte', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({
      id: 'dlv_3',
      timestamp: webhookTimestamp(Date.now()),
      body: '{"n":1}',
      secrets: [secret],
    });
    expect(() => verifyNow(secret, { ...headers }, '{"n":2}')).toThrow();
  });

  it('signs with keys decoded once, for the hot path', () => {
    const keys = [parseWebhookSecret(V2A.secret)];
    const h = signWebhookWithKeys({ id: V2A.id, timestamp: V2A.timestamp, body: V2A.body, keys });
    expect(h['webhook-signature']).toBe(V2A.signature);
  });
});

describe('bad input', () => {
  const ok = { id: 'dlv_1', timestamp: 1614265330, body: '{}', secrets: [V2A.secret] };

  it('refuses a secret that is not base64, without echoing it', () => {
    expect(() => signWebhook({ ...ok, secrets: ['whsec_not base64!!'] })).toThrow(TypeError);
    try {
      signWebhook({ ...ok, secrets: ['whsec_not base64!!'] });
    } catch (err) {
      expect((err as Error).message).not.toContain('not base64!!');
    }
  });

  it('refuses a secret shorter than the spec’s 24 bytes', () => {
    expect(() => parseWebhookSecret(`whsec_${Buffer.alloc(16).toString('base64')}`)).toThrow(/16 bytes/);
  });

  it('refuses an empty secret list', () => {
    expect(() => signWebhook({ ...ok, secrets: [] })).toThrow(TypeError);
  });

  it('refuses an id with a full stop or a line break', () => {
    expect(() => signWebhook({ ...ok, id: 'msg.1' })).toThrow(TypeError);
    expect(() => signWebhook({ ...ok, id: 'msg_1\r\nx-evil: 1' })).toThrow(TypeError);
  });

  it('refuses a timestamp in milliseconds', () => {
    expect(() => signWebhook({ ...ok, timestamp: Date.now() })).toThrow(/seconds/);
    expect(webhookTimestamp(1_614_265_330_999)).toBe(1614265330);
  });
});
