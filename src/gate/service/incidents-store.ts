import { monotonicFactory } from 'ulid';
import type { Db } from '../../store/port.js';
import type { CapabilityClaims } from '../capability.js';

export type RevocationScope = 'capability' | 'task' | 'agent' | 'tenant';
export type FreezeScope = 'agent' | 'tenant';

export interface Revocation {
  id: string;
  scope: RevocationScope;
  value: string;
  revoked_at: string;
  revoked_by: string;
  reason: string | null;
}

export interface Freeze {
  scope: FreezeScope;
  value: string;
  frozen_at: string;
  frozen_by: string;
  reason: string | null;
}

interface RevocationRow {
  id: string;
  scope: RevocationScope;
  value: string;
  revoked_at: number | string;
  revoked_by: string;
  reason: string | null;
}

interface FreezeRow {
  scope: FreezeScope;
  value: string;
  frozen_at: number | string;
  frozen_by: string;
  reason: string | null;
}

/** The id catalogue has no revocation kind yet; `rvk_` + ULID keeps the same shape. */
const ulid = monotonicFactory();
const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

/** The incident tables: revocations (history, append-only) and freezes (one row while frozen). */
export class IncidentStore {
  constructor(private readonly db: Db) {}

  async revoke(
    tx: Db,
    r: { scope: RevocationScope; value: string; by: string; reason?: string; now: number },
  ): Promise<Revocation> {
    const row: RevocationRow = {
      id: `rvk_${ulid(r.now)}`,
      scope: r.scope,
      value: r.value,
      revoked_at: r.now,
      revoked_by: r.by,
      reason: r.reason ?? null,
    };
    await tx.query({
      text: `INSERT INTO capability_revocations (id, scope, value, revoked_at, revoked_by, reason)
             VALUES ($1, $2, $3, $4, $5, $6)`,
      values: [row.id, row.scope, row.value, row.revoked_at, row.revoked_by, row.reason],
    });
    return toRevocation(row);
  }

  /**
   * Whether any revocation covers these claims: by capability id, task, agent or tenant, made at or
   * after the second the token was issued (`iat` has second precision, so a token issued in the same
   * second as the revocation counts as revoked: the safe side of the rounding).
   */
  async isRevoked(claims: CapabilityClaims): Promise<boolean> {
    const rows = await this.db.query<{ n: number }>({
      text: `SELECT 1 AS n FROM capability_revocations
             WHERE revoked_at >= $1 AND (
               (scope = 'capability' AND value = $2) OR (scope = 'task' AND value = $3)
               OR (scope = 'agent' AND value = $4) OR (scope = 'tenant' AND value = $5))
             LIMIT 1`,
      values: [claims.iat * 1000, claims.jti, claims.task ?? '', claims.agent ?? '', claims.tenant],
    });
    return rows.length > 0;
  }

  /** Inserts the freeze unless one is already in place; returns whether it is new. */
  async freeze(
    tx: Db,
    f: { scope: FreezeScope; value: string; by: string; reason?: string; now: number },
  ): Promise<boolean> {
    const rows = await tx.query({
      text: `INSERT INTO freezes (scope, value, frozen_at, frozen_by, reason) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (scope, value) DO NOTHING RETURNING scope`,
      values: [f.scope, f.value, f.now, f.by, f.reason ?? null],
    });
    return rows.length > 0;
  }

  /** Returns whether a freeze was lifted (false: it was not frozen). */
  async unfreeze(tx: Db, f: { scope: FreezeScope; value: string }): Promise<boolean> {
    const rows = await tx.query({
      text: 'DELETE FROM freezes WHERE scope = $1 AND value = $2 RETURNING scope',
      values: [f.scope, f.value],
    });
    return rows.length > 0;
  }

  async isFrozen(tenant: string, agent: string | null): Promise<boolean> {
    const rows = await this.db.query<{ n: number }>({
      text: `SELECT 1 AS n FROM freezes
             WHERE (scope = 'tenant' AND value = $1) OR (scope = 'agent' AND value = $2) LIMIT 1`,
      values: [tenant, agent ?? ''],
    });
    return rows.length > 0;
  }

  async list(): Promise<{ freezes: Freeze[]; revocations: Revocation[] }> {
    const freezes = await this.db.query<FreezeRow>({
      text: 'SELECT scope, value, frozen_at, frozen_by, reason FROM freezes ORDER BY frozen_at, scope, value',
    });
    const revocations = await this.db.query<RevocationRow>({
      text: `SELECT id, scope, value, revoked_at, revoked_by, reason FROM capability_revocations
             ORDER BY revoked_at DESC, id DESC LIMIT 500`,
    });
    return {
      freezes: freezes.map((f) => ({ ...f, frozen_at: iso(f.frozen_at) })),
      revocations: revocations.map(toRevocation),
    };
  }
}

function toRevocation(r: RevocationRow): Revocation {
  return { ...r, revoked_at: iso(r.revoked_at) };
}
