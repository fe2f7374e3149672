import { createHash, createPrivateKey, generateKeyPair, type KeyObject, sign } from 'node:crypto';
import { promisify } from 'node:util';
import type { JWK } from 'jose';
import type { Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import * as q from './sql.js';

/** A push JWT lives five minutes: long enough for a slow receiver, short enough to be useless if logged. */
export const TOKEN_TTL_SECONDS = 300;
/** A signing key signs for a day, then a new one takes over. */
export const KEY_SIGNS_MS = 24 * 3_600_000;
/** An old key stays in the JWKS past its last signature by the token lifetime and a margin of clock skew. */
export const KEY_RETIRES_AFTER_MS = (TOKEN_TTL_SECONDS + 300) * 1000;
const ALG = 'ES256';

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * Keys are made and exported with node:crypto, as tokens are signed: jose (~0.6 MB of heap) is left to
 * the tests and to the `a2a-push` receiver, which loads it with its first JWT (docs/ARCHITECTURE.md
 * "Idle memory"). The JWKs are the ones jose makes, member for member (keys.test.ts).
 */
const makeKeyPair = promisify(generateKeyPair);

/** RFC 7638 thumbprint of an EC public JWK: SHA-256 over its required members in lexicographic order. */
export function thumbprint(jwk: JWK): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(members).digest('base64url');
}

export interface PushClaims {
  /** The callback URL: `aud`. */
  audience: string;
  /** The delivery's event id: `jti`, the same on every retry. */
  eventId: string;
  taskId: string;
  body: string;
}

export interface KeyDeps {
  db: Db;
  vault: Vault;
  tenantId: string;
  now: () => number;
  /** `iss`: the gateway's public URL, read when a token is signed. */
  issuer: () => string;
}

/**
 * The push-signing keys (ES256): rows in `a2a_signing_keys` with the private half sealed in the vault,
 * so replicas sharing a store sign with the same keys. The newest key still in its signing window
 * signs; every key until `retire_at` is in the JWKS, so a token signed just before a rotation verifies.
 */
export class SigningKeys {
  private cached: { kid: string; key: KeyObject; header: string; rotateAt: number } | undefined;

  constructor(private readonly d: KeyDeps) {}

  /** Every key not yet retired; read-only (a key is made at start and by the first signature after a rotation). */
  async jwks(): Promise<{ keys: JWK[] }> {
    const rows = await this.d.db.query<q.SigningKeyRow>(q.selectSigningKeys(this.d.now()));
    return { keys: rows.map((r) => JSON.parse(r.public_jwk) as JWK) };
  }

  /**
   * A compact JWS (RFC 7515) over the claims, signed with node:crypto directly: jose's `SignJWT` goes
   * through WebCrypto, whose per-call cost (algorithm normalisation, a promise hop to the thread
   * pool) was as large as the HTTP request itself in the push bench. The token is the same: ES256
   * with the signature as IEEE P1363 `r||s` (RFC 7518 §3.4), verified by jose in push.test.ts.
   */
  async sign(c: PushClaims): Promise<string> {
    const { key, header } = await this.current();
    const iat = Math.floor(this.d.now() / 1000);
    const claims = {
      task_id: c.taskId,
      body_sha256: createHash('sha256').update(c.body).digest('hex'),
      iss: this.d.issuer(),
      aud: c.audience,
      iat,
      exp: iat + TOKEN_TTL_SECONDS,
      jti: c.eventId,
    };
    const input = `${header}.${b64url(JSON.stringify(claims))}`;
    const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }

  /** The key that signs now, made when there is none (at start, then once a day). */
  async current(): Promise<{ kid: string; key: KeyObject; header: string }> {
    const now = this.d.now();
    if (this.cached && this.cached.rotateAt > now) return this.cached;
    const rows = await this.d.db.query<q.SigningKeyRow>(q.selectSigningKeys(now));
    const usable = rows.find((r) => Number(r.rotate_at) > now) ?? (await this.create(now));
    const secret = await this.d.vault.get(usable.private_ref);
    if (!secret) throw new Error(`signing key ${usable.kid} is missing from the vault`);
    const key = createPrivateKey({ key: JSON.parse(secret.toString('utf8')) as JWK, format: 'jwk' });
    const header = b64url(JSON.stringify({ alg: ALG, kid: usable.kid, typ: 'JWT' }));
    this.cached = { kid: usable.kid, key, header, rotateAt: Number(usable.rotate_at) };
    return this.cached;
  }

  private async create(now: number): Promise<q.SigningKeyRow> {
    const { publicKey, privateKey } = await makeKeyPair('ec', { namedCurve: 'P-256' });
    const pub = publicKey.export({ format: 'jwk' }) as JWK;
    const kid = thumbprint(pub);
    const row = await this.d.db.tx(async (tx) => {
      const sealed = await this.d.vault.put(JSON.stringify(privateKey.export({ format: 'jwk' })), {
        tenantId: this.d.tenantId,
        db: tx,
      });
      const r: q.SigningKeyRow = {
        kid,
        public_jwk: JSON.stringify({ ...pub, kid, alg: ALG, use: 'sig' }),
        private_ref: sealed.ref,
        created_at: now,
        rotate_at: now + KEY_SIGNS_MS,
        retire_at: now + KEY_SIGNS_MS + KEY_RETIRES_AFTER_MS,
      };
      await tx.query(q.insertSigningKey(r));
      return r;
    });
    return row;
  }
}
