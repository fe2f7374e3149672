import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { thumbprint } from './keys.js';

describe('signing keys made with node:crypto', () => {
  it('have the RFC 7638 thumbprint jose computes, and the JWK jose exports', async () => {
    for (let i = 0; i < 20; i++) {
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk = publicKey.export({ format: 'jwk' }) as JWK;
      expect(thumbprint(jwk)).toBe(await calculateJwkThumbprint(jwk));
      expect(jwk).toEqual(await exportJWK(publicKey));
    }
  });

  it('export a private JWK that jose signs with, verified by the public one', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const priv = privateKey.export({ format: 'jwk' }) as JWK;
    expect(Object.keys(priv).sort()).toEqual(['crv', 'd', 'kty', 'x', 'y']);
    const token = await new SignJWT({ a: 1 })
      .setProtectedHeader({ alg: 'ES256' })
      .sign(await importJWK(priv, 'ES256'));
    const pub = await importJWK(publicKey.export({ format: 'jwk' }) as JWK, 'ES256');
    expect((await jwtVerify(token, pub)).payload.a).toBe(1);
  });
});
