import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { SendResult } from '../../../egress/index.js';
import { a2aPush, a2aPushConfig } from './index.js';

const AUD = 'https://orch.example/v1/ingress/orch';
const NOW = Date.UTC(2026, 0, 1, 12);
const BODY = JSON.stringify({ statusUpdate: { taskId: 't1', status: { state: 'TASK_STATE_WORKING' } } });

async function key(kid: string) {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } as JWK };
}

type Key = Awaited<ReturnType<typeof key>>;

function sign(k: Key, over: { aud?: string; iat?: number; exp?: number; body?: string } = {}) {
  const iat = over.iat ?? Math.floor(NOW / 1000);
  return new SignJWT({
    task_id: 't1',
    body_sha256: createHash('sha256')
      .update(over.body ?? BODY)
      .digest('hex'),
  })
    .setProtectedHeader({ alg: 'ES256', kid: k.kid })
    .setAudience(over.aud ?? AUD)
    .setIssuedAt(iat)
    .setExpirationTime(over.exp ?? iat + 300)
    .setJti('evt_1')
    .sign(k.privateKey);
}

/** The JWKS endpoint as the egress guard would answer it; counts fetches. */
function jwksServer(keys: () => JWK[]) {
  const calls = { n: 0 };
  const send = async (): Promise<SendResult> => {
    calls.n += 1;
    return { sent: true, status: 200, body: JSON.stringify({ keys: keys() }), durationMs: 1 };
  };
  return { egress: { send }, calls };
}

function source(keys: () => JWK[]) {
  const server = jwksServer(keys);
  const config = a2aPushConfig.parse({
    type: 'a2a-push',
    jwks_url: 'https://sender.example/.well-known/jwks.json',
    audience: AUD,
  });
  return { src: a2aPush.create(config, () => undefined, { egress: server.egress }), calls: server.calls };
}

const req = (token: string, now = NOW, body = BODY) => ({
  headers: { authorization: `Bearer ${token}` },
  body: new TextEncoder().encode(body),
  now,
});

describe('the a2a-push source (JWT against the sender JWKS)', () => {
  it('accepts a valid push: the jti is the delivery id, the StreamResponse field the event name', async () => {
    const k = await key('k1');
    const { src } = source(() => [k.jwk]);
    const r = await src.verifyAsync!(req(await sign(k)));
    expect(r).toMatchObject({ kind: 'ok', deliveryId: 'evt_1', eventName: 'statusUpdate' });
  });

  it('refuses a wrong audience, an expired token, an iat in the future and a body that is not the signed one', async () => {
    const k = await key('k1');
    const { src } = source(() => [k.jwk]);
    const t = Math.floor(NOW / 1000);
    expect(await src.verifyAsync!(req(await sign(k, { aud: 'https://elsewhere.example/' })))).toMatchObject({
      reason: 'bad_signature',
    });
    expect(await src.verifyAsync!(req(await sign(k, { iat: t - 900, exp: t - 600 })))).toMatchObject({
      reason: 'timestamp_too_old',
    });
    expect(await src.verifyAsync!(req(await sign(k, { iat: t + 600, exp: t + 900 })))).toMatchObject({
      kind: 'rejected',
    });
    const other = BODY.replace('WORKING', 'COMPLETED');
    expect(await src.verifyAsync!(req(await sign(k), NOW, other))).toMatchObject({ reason: 'bad_signature' });
    expect(await src.verifyAsync!({ headers: {}, body: new Uint8Array(), now: NOW })).toMatchObject({
      reason: 'missing_signature',
    });
  });

  it('refetches the JWKS for a new kid (rotation), but not on every unknown kid', async () => {
    const k1 = await key('k1');
    const k2 = await key('k2');
    let published = [k1.jwk];
    const { src, calls } = source(() => published);
    expect((await src.verifyAsync!(req(await sign(k1)))).kind).toBe('ok');
    published = [k2.jwk, k1.jwk];
    expect((await src.verifyAsync!(req(await sign(k2), NOW + 31_000))).kind).toBe('ok');
    expect(calls.n).toBe(2);
    const forged = await key('k-forged');
    expect((await src.verifyAsync!(req(await sign(forged), NOW + 32_000))).kind).toBe('rejected');
    expect(calls.n).toBe(2);
  });

  it('compares a token in constant time and needs one of jwks_url or a token', async () => {
    const config = a2aPushConfig.parse({ type: 'a2a-push', token: 'tok-0123456789' });
    const src = a2aPush.create(config, () => undefined);
    const body = new TextEncoder().encode(BODY);
    expect(
      src.verify({ headers: { 'x-a2a-notification-token': 'tok-0123456789' }, body, now: NOW }),
    ).toMatchObject({
      kind: 'ok',
      deliveryId: 't1:TASK_STATE_WORKING',
    });
    expect(src.verify({ headers: { 'x-a2a-notification-token': 'nope' }, body, now: NOW })).toMatchObject({
      reason: 'bad_signature',
    });
    expect(a2aPushConfig.safeParse({ type: 'a2a-push' }).success).toBe(false);
    expect(
      a2aPushConfig.safeParse({ type: 'a2a-push', jwks_url: 'https://s.example/jwks.json' }).success,
    ).toBe(false);
  });
});
