import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import type { InboundRequest } from '../../source.js';
import { runSourceCase } from '../source.case.js';
import { standardWebhooks, standardWebhooksKey } from './index.js';

vi.mock('node:crypto', async (orig) => {
  const m = await orig<typeof import('node:crypto')>();
  return { ...m, timingSafeEqual: vi.fn(m.timingSafeEqual) };
});

const bytes = (s: string) => new TextEncoder().encode(s);
const create = (raw: Record<string, unknown>) =>
  standardWebhooks.create(
    standardWebhooks.configSchema.parse({ type: 'standard-webhooks', ...raw }),
    () => undefined,
  );

function request(
  id: string,
  ts: number | string,
  body: string,
  signature: string,
  nowSec: number,
): InboundRequest {
  return {
    headers: { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signature },
    body: bytes(body),
    now: nowSec * 1000,
  };
}

// 2a and 2b: the official vectors (signature_vectors.md §2).
const V2A = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  ts: 1614265330,
  body: '{"test": 2432232314}',
  sig: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const V2B = {
  secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  id: 'msg_27UH4WbU6Z5A5EzD8u03UvzRbpk',
  ts: 1649367553,
  body: '{"email":"test@example.com","username":"test_user"}',
  sig: 'v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=',
};
const DECOY = 'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';

const SECRETS = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'];
const FOREIGN = 'whsec_' + Buffer.from('a key nobody configured here').toString('base64');

runSourceCase('standard-webhooks', {
  source: create({ secret: SECRETS }),
  secrets: SECRETS,
  signsBody: true,
  headers: { signature: 'webhook-signature', id: 'webhook-id', timestamp: 'webhook-timestamp' },
  sign(now, { at = now, deliveryId, secretIndex = 0, foreignSecret }) {
    const secret = foreignSecret ? FOREIGN : (SECRETS[secretIndex] ?? '');
    const body = JSON.stringify({ type: 'invoice.paid', data: { id: 'inv_1' } });
    const signature = new Webhook(secret).sign(deliveryId, new Date(at), body);
    return { ...request(deliveryId, Math.floor(at / 1000), body, signature, 0), now };
  },
});

describe('standard-webhooks published vectors', () => {
  it('accepts vector 2a at its own timestamp', () => {
    const result = create({ secret: V2A.secret }).verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts));
    expect(result).toMatchObject({ kind: 'ok', deliveryId: V2A.id, timestamp: V2A.ts * 1000 });
  });

  it('accepts vector 2b (the Rust library test)', () => {
    const result = create({ secret: V2B.secret }).verify(request(V2B.id, V2B.ts, V2B.body, V2B.sig, V2B.ts));
    expect(result).toMatchObject({ kind: 'ok', deliveryId: V2B.id, payload: { username: 'test_user' } });
  });

  it('rejects the 2c negative vector (last character changed)', () => {
    const sig = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=';
    const result = create({ secret: V2A.secret }).verify(request(V2A.id, V2A.ts, V2A.body, sig, V2A.ts));
    expect(result).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
  });

  it('accepts 2a with the bare secret (no whsec_ prefix, vector 2d)', () => {
    const bare = V2A.secret.slice('whsec_'.length);
    const result = create({ secret: bare }).verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts));
    expect(result.kind).toBe('ok');
  });

  it('accepts a valid signature listed after the decoy, and rejects the decoy alone', () => {
    const source = create({ secret: V2A.secret });
    const both = `${DECOY} ${V2A.sig}`;
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, both, V2A.ts)).kind).toBe('ok');
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, DECOY, V2A.ts))).toMatchObject({
      reason: 'bad_signature',
    });
  });

  it('verifies the large-payload vectors (the body is not JSON, so it is then refused as malformed)', () => {
    const source = create({ secret: V2A.secret });
    const cases: Array<[number, string]> = [
      [1048576, 'v1,txpEUxqWZJ5nteTnymUVa+7C4NHpBeXJ6CsBAW0c3/A='],
      [262144, 'v1,Mw4Pe2WgApuT7NSqnSq0PQPV9gbLdggCl9B865x5Xh0='],
      [262143, 'v1,NTItnqyWMoFhk2Bbe5V/BMdcFRWgcSQaTgqLHX7FC7c='],
    ];
    for (const [n, sig] of cases) {
      const result = source.verify(request(V2A.id, V2A.ts, 'a'.repeat(n), sig, V2A.ts));
      expect(result, String(n)).toMatchObject({ kind: 'rejected', reason: 'malformed' });
      const wrong = source.verify(request(V2A.id, V2A.ts, 'a'.repeat(n + 1), sig, V2A.ts));
      expect(wrong, String(n)).toMatchObject({ reason: 'bad_signature' });
    }
  });

  it('parses the spec example header and rejects it without a crash (no key is published)', () => {
    const header =
      'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYBWNUFbH0PSdsEHiRqyWGd/N1spi1M8PAg==';
    const result = create({ secret: V2A.secret }).verify(
      request('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 1674087231, '{}', header, 1674087231),
    );
    expect(result).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
  });
});

describe('standard-webhooks against the standardwebhooks reference library', () => {
  const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
  const body = '{"type":"user.created","data":{"id":"u_1","name":"Zoë"}}';

  it('accepts what the library signs, and only within the window', () => {
    const now = Date.now();
    const sig = new Webhook(secret).sign('msg_lib_1', new Date(now), body);
    const req = request('msg_lib_1', Math.floor(now / 1000), body, sig, 0);
    expect(create({ secret }).verify({ ...req, now })).toMatchObject({
      kind: 'ok',
      eventName: 'user.created',
    });
    expect(create({ secret }).verify({ ...req, now: now + 10 * 60_000 })).toMatchObject({
      reason: 'timestamp_too_old',
    });
  });

  it('signs exactly what the library verifies (our HMAC, its verifier)', () => {
    const now = Date.now();
    const ts = Math.floor(now / 1000);
    const key = standardWebhooksKey(secret);
    const ours = createHmac('sha256', key).update(`msg_lib_2.${ts}.${body}`).digest('base64');
    const headers = {
      'webhook-id': 'msg_lib_2',
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,${ours}`,
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(create({ secret }).verify({ headers, body: bytes(body), now }).kind).toBe('ok');
  });

  it('agrees with the library on raw (not base64) secrets', () => {
    const now = Date.now();
    const sig = new Webhook('plain text secret', { format: 'raw' }).sign('msg_raw', new Date(now), body);
    const source = create({ secret: 'plain text secret', secret_format: 'raw' });
    expect(source.verify({ ...request('msg_raw', Math.floor(now / 1000), body, sig, 0), now }).kind).toBe(
      'ok',
    );
  });
});

describe('standard-webhooks specifics', () => {
  it('accepts the svix-* header names Svix sends by default', () => {
    const req = request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts);
    const svix: InboundRequest = {
      ...req,
      headers: { 'svix-id': V2A.id, 'svix-timestamp': String(V2A.ts), 'svix-signature': V2A.sig },
    };
    expect(create({ secret: V2A.secret }).verify(svix).kind).toBe('ok');
  });

  it('rejects a header with only asymmetric (v1a) entries, saying v1a is not supported', () => {
    const result = create({ secret: V2A.secret }).verify(
      request(V2A.id, V2A.ts, V2A.body, 'v1a,AAAA', V2A.ts),
    );
    expect(result).toMatchObject({ kind: 'rejected', reason: 'bad_signature' });
    expect(result.kind === 'rejected' && result.message).toContain('v1a');
  });

  it('honours a configured tolerance', () => {
    const source = create({ secret: V2A.secret, tolerance_seconds: 30 });
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts + 31))).toMatchObject({
      reason: 'timestamp_too_old',
    });
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts + 30)).kind).toBe('ok');
  });

  it('treats exactly 300 seconds as inside the window and 301 as outside, like the library', () => {
    const source = create({ secret: V2A.secret });
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts + 300)).kind).toBe('ok');
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts + 301)).kind).toBe('rejected');
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts - 300)).kind).toBe('ok');
    expect(source.verify(request(V2A.id, V2A.ts, V2A.body, V2A.sig, V2A.ts - 301))).toMatchObject({
      reason: 'timestamp_in_future',
    });
  });

  it('refuses a secret that is not base64 unless secret_format is raw, without echoing it', () => {
    expect(() => create({ secret: 'whsec_not base64!' })).toThrow(/not base64/);
    expect(() => create({ secret: 'whsec_not base64!' })).not.toThrow(/not base64!/);
  });
});
