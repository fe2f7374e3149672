import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type KeyRing, keyDigest } from '../kernel/auth.js';
import type { Principal } from '../kernel/module.js';
import type { Db } from '../store/port.js';
import { one } from '../store/port.js';
import * as q from './sql.js';

/** The session cookie: HttpOnly, SameSite=Strict, Path=/console, Secure behind HTTPS. */
export const SESSION_COOKIE = 'sb_console';
/** The sign-in form's own token (double submit), so a foreign page cannot sign a browser in. */
export const LOGIN_COOKIE = 'sb_console_login';

/** 32 random bytes: a session id nobody guesses, as a cookie-safe string. */
const TOKEN_BYTES = 32;

export interface ConsoleSession {
  /** The SHA-256 of the cookie value (what the table keys on). */
  id: string;
  principal: Principal;
  csrf: string;
  expiresAt: number;
}

export type SignIn =
  | { ok: true; token: string; session: ConsoleSession }
  | { ok: false; reason: 'unknown_key' | 'agent_key' };

export function randomToken(bytes = TOKEN_BYTES): string {
  return randomBytes(bytes).toString('base64url');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Constant-time equality of two strings (different lengths are unequal without a timing hint of where). */
export function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y) && a.length === b.length;
}

/**
 * Server-side sessions. A sign-in with an approver or admin key stores a row with the key's MAC (never
 * the key, never the cookie value); every request finds the row by the cookie's digest and asks the key
 * ring whether that key is still configured with the same name and role. Expiry is absolute: a GET
 * never writes, so there is no sliding renewal. Sign-out deletes the row.
 */
export class Sessions {
  constructor(
    private readonly d: {
      db: Db;
      keys: KeyRing;
      now: () => number;
      /** Derived from the vault key (`consoleSession`), so replicas accept each other's sessions. */
      macKey: Uint8Array;
      ttlMs: number;
    },
  ) {}

  private mac(digest: Buffer): Buffer {
    return createHmac('sha256', this.d.macKey).update(digest).digest();
  }

  async signIn(secret: string): Promise<SignIn> {
    const principal = this.d.keys.resolve(secret);
    if (!principal) return { ok: false, reason: 'unknown_key' };
    // Agent keys never get a console: an agent deciding its own approvals is what the gate prevents.
    if (principal.role === 'agent') return { ok: false, reason: 'agent_key' };
    const now = this.d.now();
    const token = randomToken();
    const session: ConsoleSession = {
      id: sha256Hex(token),
      principal: { name: principal.name, role: principal.role },
      csrf: randomToken(24),
      expiresAt: now + this.d.ttlMs,
    };
    await this.d.db.query(q.deleteExpiredSessions(now));
    await this.d.db.query(
      q.insertSession({
        id: session.id,
        principal: principal.name,
        role: principal.role,
        key_mac: this.mac(keyDigest(secret)).toString('hex'),
        csrf: session.csrf,
        created_at: now,
        expires_at: session.expiresAt,
      }),
    );
    return { ok: true, token, session };
  }

  /** The live session behind a cookie value, or undefined (unknown, expired, or its key is gone). */
  async resolve(token: string | undefined): Promise<ConsoleSession | undefined> {
    if (!token || token.length > 100) return undefined;
    const row = await one<q.SessionRow>(this.d.db, q.selectSession(sha256Hex(token), this.d.now()));
    if (!row) return undefined;
    const principal = this.d.keys.resolveMac((d) => this.mac(d), Buffer.from(row.key_mac, 'hex'));
    if (!principal || principal.name !== row.principal || principal.role !== row.role) return undefined;
    if (principal.role === 'agent') return undefined;
    return {
      id: row.id,
      principal: { name: row.principal, role: principal.role },
      csrf: row.csrf,
      expiresAt: Number(row.expires_at),
    };
  }

  async signOut(token: string | undefined): Promise<string | undefined> {
    if (!token) return undefined;
    const [row] = await this.d.db.query<{ id: string }>(q.deleteSession(sha256Hex(token)));
    return row?.id;
  }
}
