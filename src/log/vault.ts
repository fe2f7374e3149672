import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { bytesDigest, newId, RandomPool } from '../envelope/index.js';
import type { Db } from '../store/port.js';
import * as q from './sql.js';

const KEY_BYTES = 32;
const IV_BYTES = 12; // the GCM nonce size NIST SP 800-38D recommends

/** The GCM nonces: random 96-bit values, drawn 4 KiB at a time (~2 % of a reach touch's CPU one by one). */
const nonces = new RandomPool(IV_BYTES * 341);

export interface StoredPayload {
  ref: string;
  digest: string;
}

/**
 * Payloads sealed with `readSoon` stay readable in plaintext for a moment after their commit, so the
 * reader that follows at once (ingress admission, handed the accepted event right after the route's
 * commit) skips the row's read and its decryption: ~12 % of the store time of a webhook (docs/ARCHITECTURE.md,
 * "Where the time goes"). Bounded three ways; the oldest goes first.
 */
const FRESH_MAX_ENTRIES = 512;
const FRESH_MAX_BYTES = 8 * 1024 * 1024;
const FRESH_MAX_AGE_MS = 30_000;

interface Fresh {
  bytes: Buffer;
  sealedAt: number;
  expiresAt: number | null;
}

/**
 * The evidence vault: raw payloads (webhook bodies, tool inputs) encrypted at rest with AES-256-GCM.
 * Events carry only `payload_ref` and `payload_digest`. The ref is bound as additional authenticated
 * data, so a ciphertext copied onto another row fails to decrypt instead of answering for it.
 */
export class Vault {
  readonly keyId: string;
  private readonly fresh = new Map<string, Fresh>();
  private freshBytes = 0;

  constructor(
    private readonly db: Db,
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    if (key.length !== KEY_BYTES) throw new Error(`vault key must be ${KEY_BYTES} bytes`);
    this.keyId = createHash('sha256').update(key).digest('hex').slice(0, 12);
  }

  async put(
    data: Uint8Array | string,
    opts: {
      tenantId: string;
      ttlMs?: number;
      db?: Db;
      /** It is read back right after its commit (the accepted webhook's payload, by admission). */
      readSoon?: boolean;
    },
  ): Promise<StoredPayload> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    const ref = `vault://${newId('vault')}`;
    const iv = nonces.bytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(ref));
    const ciphertext = Buffer.concat([cipher.update(bytes), cipher.final()]);
    const tag = cipher.getAuthTag();
    const digest = bytesDigest(bytes);
    const now = this.now();
    const db = opts.db ?? this.db;
    const expiresAt = opts.ttlMs ? now + opts.ttlMs : null;
    await db.query(
      q.insertVaultPayload({
        ref,
        tenantId: opts.tenantId,
        digest,
        iv,
        tag,
        ciphertext,
        keyId: this.keyId,
        createdAt: now,
        expiresAt,
      }),
    );
    if (opts.readSoon) {
      const fresh: Fresh = { bytes, sealedAt: now, expiresAt };
      // Only once it is durable: a rolled-back seal is never read from here.
      if (db.inTransaction) db.afterCommit(() => this.remember(ref, fresh));
      else this.remember(ref, fresh);
    }
    return { ref, digest };
  }

  private remember(ref: string, fresh: Fresh): void {
    if (fresh.bytes.byteLength > FRESH_MAX_BYTES / 4) return;
    this.fresh.set(ref, fresh);
    this.freshBytes += fresh.bytes.byteLength;
    for (const [oldest, f] of this.fresh) {
      if (this.fresh.size <= FRESH_MAX_ENTRIES && this.freshBytes <= FRESH_MAX_BYTES) break;
      this.forget(oldest, f);
    }
  }

  private forget(ref: string, fresh: Fresh): void {
    this.fresh.delete(ref);
    this.freshBytes -= fresh.bytes.byteLength;
  }

  /** A `readSoon` payload still held, as a copy (the caller may change it), or undefined. */
  private recent(ref: string): Buffer | undefined {
    const f = this.fresh.get(ref);
    if (!f) return undefined;
    const now = this.now();
    if (now - f.sealedAt > FRESH_MAX_AGE_MS || (f.expiresAt !== null && f.expiresAt <= now)) {
      this.forget(ref, f);
      return undefined;
    }
    return Buffer.from(f.bytes);
  }

  /** The plaintext, or undefined when the ref is unknown or expired. Throws when the ciphertext was tampered with. */
  async get(ref: string, db: Db = this.db): Promise<Buffer | undefined> {
    const recent = this.recent(ref);
    if (recent) return recent;
    const row = (
      await db.query<{ iv: Buffer; tag: Buffer; ciphertext: Buffer; expires_at: number | null }>(
        q.selectVaultPayload(ref),
      )
    )[0];
    if (!row) return undefined;
    if (row.expires_at !== null && Number(row.expires_at) <= this.now()) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', this.key, row.iv);
    decipher.setAAD(Buffer.from(ref));
    decipher.setAuthTag(row.tag);
    return Buffer.concat([decipher.update(row.ciphertext), decipher.final()]);
  }

  /** Deletes payloads past their retention; returns how many. */
  async purgeExpired(): Promise<number> {
    const rows = await this.db.query<{ ref: string }>(q.deleteExpiredVaultPayloads(this.now()));
    for (const r of rows) {
      const f = this.fresh.get(r.ref);
      if (f) this.forget(r.ref, f);
    }
    return rows.length;
  }
}

export type KeySource = { kind: 'env'; name: string } | { kind: 'file'; path: string; created: boolean };

/**
 * The vault key: from the named environment variable (32 bytes as base64 or hex), else from
 * `<data dir>/vault.key`, generated on first start. The generated file is fine for one machine; replicas
 * sharing a PostgreSQL must share the key, so `doctor` warns when a file key is used with PostgreSQL.
 */
export function resolveVaultKey(
  envName: string,
  keyFile: string,
  env: NodeJS.ProcessEnv = process.env,
): { key: Buffer; source: KeySource } {
  const fromEnv = env[envName];
  if (fromEnv !== undefined && fromEnv !== '') {
    const key = decodeKey(fromEnv);
    if (!key)
      throw new Error(
        `${envName} must hold 32 bytes as base64 or 64 hex characters (generate one with: openssl rand -base64 32)`,
      );
    return { key, source: { kind: 'env', name: envName } };
  }
  if (existsSync(keyFile)) {
    const key = decodeKey(readFileSync(keyFile, 'utf8').trim());
    if (!key)
      throw new Error(
        `${keyFile} does not hold a 32-byte key; restore it from backup (payloads sealed with it cannot be read without it)`,
      );
    return { key, source: { kind: 'file', path: keyFile, created: false } };
  }
  const key = randomBytes(KEY_BYTES);
  mkdirSync(dirname(keyFile), { recursive: true });
  writeFileSync(keyFile, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return { key, source: { kind: 'file', path: keyFile, created: true } };
}

function decodeKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const b = Buffer.from(text, 'base64');
  return b.length === KEY_BYTES ? b : undefined;
}
