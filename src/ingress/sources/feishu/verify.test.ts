import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { larkDecrypt, larkSignature } from './crypto.js';
import { feishu, feishuBinding } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

const bytes = (s: string) => new TextEncoder().encode(s);
const create = (raw: Record<string, unknown>) =>
  feishu.create(feishu.configSchema.parse({ type: 'feishu', ...raw }), () => undefined);

/** What Feishu does with an Encrypt Key: AES-256-CBC under SHA-256(key), random IV in front. */
function encrypt(plaintext: string, key: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', createHash('sha256').update(key).digest(), iv);
  return Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final()]).toString('base64');
}

function signedRequest(body: string, key: string, ts: number, nonce = 'nonce-1'): InboundRequest {
  return {
    headers: {
      'x-lark-signature': larkSignature(String(ts), nonce, key, bytes(body)),
      'x-lark-request-timestamp': String(ts),
      'x-lark-request-nonce': nonce,
    },
    body: bytes(body),
    now: ts * 1000,
  };
}

const TOKEN = 'verification-token-1';
const KEYS = ['encrypt-key-old', 'encrypt-key-new'];
const event = (eventId: string, token = TOKEN) =>
  JSON.stringify({
    schema: '2.0',
    header: {
      event_id: eventId,
      event_type: 'im.message.receive_v1',
      token,
      tenant_key: 'tk1',
      app_id: 'cli_1',
    },
    event: { message: { content: '{"text":"hi"}' } },
  });

runSourceCase('feishu', {
  source: create({ verification_token: TOKEN, encrypt_key: KEYS }),
  secrets: [TOKEN, ...KEYS],
  signsBody: true,
  headers: { signature: 'x-lark-signature', timestamp: 'x-lark-request-timestamp' },
  sign(now, { at = now, deliveryId, secretIndex = 0, foreignSecret }) {
    const key = foreignSecret ? 'some-other-key' : (KEYS[secretIndex] ?? '');
    const body = JSON.stringify({ encrypt: encrypt(event(deliveryId), key) });
    return { ...signedRequest(body, key, Math.floor(at / 1000)), now };
  },
});

describe('feishu reference vectors (computed, not official: signature_vectors.md §4b, §4c)', () => {
  const ts = 1599360473;
  const body = '{"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="}';

  it('computes the 4b-1 signature', () => {
    expect(larkSignature(String(ts), 'n0nce', 'test key', bytes(body))).toBe(
      'd1b84b9d84c742c076d8115bc6ee8b853e794a619835485c805b9c8eb7148247',
    );
  });

  it('decrypts the 4c vector to "hello world"', () => {
    expect(larkDecrypt('P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=', 'test key')).toBe('hello world');
  });

  it('verifies the 4b-1 request, then refuses its decrypted text as not JSON', () => {
    const source = create({ verification_token: TOKEN, encrypt_key: 'test key' });
    const req: InboundRequest = {
      headers: {
        'x-lark-signature': 'd1b84b9d84c742c076d8115bc6ee8b853e794a619835485c805b9c8eb7148247',
        'x-lark-request-timestamp': String(ts),
        'x-lark-request-nonce': 'n0nce',
      },
      body: bytes(body),
      now: ts * 1000,
    };
    expect(source.verify(req)).toMatchObject({ kind: 'rejected', reason: 'malformed' });
    const otherNonce = { ...req, headers: { ...req.headers, 'x-lark-request-nonce': 'n0nc3' } };
    expect(source.verify(otherNonce)).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
  });

  it('refuses a wrong key for decryption', () => {
    expect(() => larkDecrypt('P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=', 'other key')).toThrow();
  });
});

describe('feishu with an encrypt key', () => {
  const key = 'my-encrypt-key';
  const source = create({ verification_token: TOKEN, encrypt_key: key });
  const now = 1_700_000_000;

  it('decrypts a signed event and reports its id, type and signed time', () => {
    const body = JSON.stringify({ encrypt: encrypt(event('ev_1'), key) });
    const result = source.verify(signedRequest(body, key, now));
    expect(result).toMatchObject({
      kind: 'ok',
      deliveryId: 'ev_1',
      eventName: 'im.message.receive_v1',
      timestamp: now * 1000,
    });
    expect(result.kind === 'ok' && feishuBinding(result.payload)).toEqual({
      tenant_key: 'tk1',
      app_id: 'cli_1',
    });
  });

  it('answers the (unsigned, encrypted) URL challenge when the token inside matches', () => {
    const challenge = JSON.stringify({ challenge: 'ch-1', token: TOKEN, type: 'url_verification' });
    const req: InboundRequest = {
      headers: {},
      body: bytes(JSON.stringify({ encrypt: encrypt(challenge, key) })),
      now,
    };
    expect(source.verify(req)).toEqual({
      kind: 'challenge',
      response: { status: 200, body: { challenge: 'ch-1' }, contentType: 'application/json' },
    });
  });

  it('refuses a challenge with the wrong token, or encrypted under another key', () => {
    const wrongToken = JSON.stringify({ challenge: 'c', token: 'nope', type: 'url_verification' });
    const a: InboundRequest = {
      headers: {},
      body: bytes(JSON.stringify({ encrypt: encrypt(wrongToken, key) })),
      now,
    };
    expect(source.verify(a)).toMatchObject({ reason: 'bad_signature' });
    const right = JSON.stringify({ challenge: 'c', token: TOKEN, type: 'url_verification' });
    const b: InboundRequest = {
      headers: {},
      body: bytes(JSON.stringify({ encrypt: encrypt(right, 'x') })),
      now,
    };
    expect(source.verify(b)).toMatchObject({ reason: 'bad_signature' });
  });

  it('refuses a signed event whose body token is wrong', () => {
    const body = JSON.stringify({ encrypt: encrypt(event('ev_2', 'stolen?'), key) });
    expect(source.verify(signedRequest(body, key, now))).toMatchObject({ reason: 'bad_signature' });
  });
});

describe('feishu without an encrypt key', () => {
  const withEnv = feishu.create(
    feishu.configSchema.parse({ type: 'feishu', verification_token_env: 'LARK_TOKEN' }),
    (n) => (n === 'LARK_TOKEN' ? TOKEN : undefined),
  );
  const plain = (body: string): InboundRequest => ({ headers: {}, body: bytes(body), now: 0 });

  it('needs its token variable at start-up', () => {
    expect(() => create({ verification_token_env: 'LARK_TOKEN' })).toThrow(/LARK_TOKEN is not set/);
  });

  it('answers the plaintext challenge only with the right token', () => {
    const ok = JSON.stringify({ challenge: 'c-2', token: TOKEN, type: 'url_verification' });
    expect(withEnv.verify(plain(ok))).toMatchObject({
      kind: 'challenge',
      response: { body: { challenge: 'c-2' } },
    });
    const bad = JSON.stringify({ challenge: 'c-2', token: 'x', type: 'url_verification' });
    expect(withEnv.verify(plain(bad))).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
  });

  it('accepts schema 2.0 and 1.0 events by their body token', () => {
    expect(withEnv.verify(plain(event('ev_3')))).toMatchObject({ kind: 'ok', deliveryId: 'ev_3' });
    const v1 = JSON.stringify({
      uuid: 'u-1',
      token: TOKEN,
      type: 'event_callback',
      event: { type: 'message' },
    });
    expect(withEnv.verify(plain(v1))).toMatchObject({ kind: 'ok', deliveryId: 'u-1', eventName: 'message' });
    expect(withEnv.verify(plain(event('ev_4', 'wrong')))).toMatchObject({ reason: 'bad_signature' });
  });

  it('refuses an encrypted body it has no key for', () => {
    expect(withEnv.verify(plain('{"encrypt":"AAAA"}'))).toMatchObject({ reason: 'malformed' });
  });
});
