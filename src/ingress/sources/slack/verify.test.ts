import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { slack, slackBinding } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

const bytes = (s: string) => new TextEncoder().encode(s);
const create = (raw: Record<string, unknown>) =>
  slack.create(slack.configSchema.parse({ type: 'slack', ...raw }), () => undefined);

function request(ts: number | string, body: string, signature: string, nowSec: number): InboundRequest {
  return {
    headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': String(ts) },
    body: bytes(body),
    now: nowSec * 1000,
  };
}

const sign = (secret: string, ts: number | string, body: string) =>
  `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;

const SECRETS = ['old-signing-secret', 'new-signing-secret'];

runSourceCase('slack', {
  source: create({ secret: SECRETS }),
  secrets: SECRETS,
  signsBody: true,
  headers: { signature: 'x-slack-signature', timestamp: 'x-slack-request-timestamp' },
  sign(now, { at = now, deliveryId, secretIndex = 0, foreignSecret }) {
    const secret = foreignSecret ? 'not-our-secret' : (SECRETS[secretIndex] ?? '');
    const ts = Math.floor(at / 1000);
    const body = JSON.stringify({
      type: 'event_callback',
      team_id: 'T1',
      event_id: deliveryId,
      event: { type: 'app_mention', text: 'hi' },
    });
    return { ...request(ts, body, sign(secret, ts, body), 0), now };
  },
});

// 3a: Slack's own SDK test, citing the docs' worked example (signature_vectors.md §3).
const V3A = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  ts: 1531420618,
  body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  sig: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

describe('slack published vector', () => {
  it('accepts the docs slash-command vector (3a) and reads its form body', () => {
    const result = create({ secret: V3A.secret }).verify(request(V3A.ts, V3A.body, V3A.sig, V3A.ts));
    expect(result).toMatchObject({
      kind: 'ok',
      eventName: 'slash_command',
      deliveryId: '398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
      timestamp: V3A.ts * 1000,
      payload: { command: '/webhook-collect', team_id: 'T1DC2JH3J' },
    });
  });

  it('uses the signing secret as text, never hex-decoded', () => {
    const result = create({ secret: V3A.secret }).verify(request(V3A.ts, `${V3A.body}x`, V3A.sig, V3A.ts));
    expect(result).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
  });

  it('rejects the vector six minutes later', () => {
    const result = create({ secret: V3A.secret }).verify(request(V3A.ts, V3A.body, V3A.sig, V3A.ts + 360));
    expect(result).toMatchObject({ kind: 'rejected', reason: 'timestamp_too_old' });
  });
});

describe('slack specifics', () => {
  const secret = 'signing';
  const source = create({ secret });
  const now = 1_700_000_000;

  it('answers url_verification with its challenge, once the signature holds', () => {
    const body = JSON.stringify({ token: 'legacy', challenge: 'abc123', type: 'url_verification' });
    expect(source.verify(request(now, body, sign(secret, now, body), now))).toEqual({
      kind: 'challenge',
      response: { status: 200, body: { challenge: 'abc123' }, contentType: 'application/json' },
    });
    expect(source.verify(request(now, body, sign('forged', now, body), now))).toMatchObject({
      kind: 'rejected',
      reason: 'bad_signature',
    });
  });

  it('answers ssl_check with an empty 200 once signed', () => {
    const body = 'ssl_check=1&token=legacy';
    expect(source.verify(request(now, body, sign(secret, now, body), now))).toEqual({
      kind: 'challenge',
      response: { status: 200, body: '' },
    });
  });

  it('reads interactivity payloads from the form field `payload`', () => {
    const inner = {
      type: 'block_actions',
      trigger_id: 't-9',
      team: { id: 'T9' },
      actions: [{ action_id: 'approve' }],
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(inner))}`;
    const result = source.verify(request(now, body, sign(secret, now, body), now));
    expect(result).toMatchObject({ kind: 'ok', eventName: 'block_actions', deliveryId: 't-9' });
    expect(result.kind === 'ok' && slackBinding(result.payload)).toEqual({ team_id: 'T9' });
  });

  it('keeps the same delivery id on a retry of the same event (X-Slack-Retry-Num)', () => {
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev1', event: { type: 'message' } });
    const first = source.verify(request(now, body, sign(secret, now, body), now));
    const retry = source.verify(request(now + 60, body, sign(secret, now + 60, body), now + 60));
    expect(first).toMatchObject({ kind: 'ok', deliveryId: 'Ev1', eventName: 'message' });
    expect(retry).toMatchObject({ kind: 'ok', deliveryId: 'Ev1' });
  });

  it('refuses a signature of another version', () => {
    const body = '{}';
    const v1 = sign(secret, now, body).replace('v0=', 'v1=');
    expect(source.verify(request(now, body, v1, now))).toMatchObject({ reason: 'bad_signature' });
  });

  it('binds team, enterprise and app ids', () => {
    expect(slackBinding({ team_id: 'T1', enterprise_id: 'E1', api_app_id: 'A1' })).toEqual({
      team_id: 'T1',
      enterprise_id: 'E1',
      api_app_id: 'A1',
    });
  });
});
