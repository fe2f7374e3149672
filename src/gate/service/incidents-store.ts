import { newId } from '../../envelope/index.js';
import type { Db } from '../../store/port.js';
import type { CapabilityClaims } from '../capability.js';
import * as q from '../sql.js';

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

/** The incidents list shows this many revocations, newest first: the history only grows. */
const LISTED_REVOCATIONS = 500;
const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

/** The incident tables: revocations (history, append-only) and freezes (one row while frozen). */
export class IncidentStore {
  constructor(private readonly db: Db) {}

  async revoke(
    tx: Db,
    r: { scope: RevocationScope; value: string; by: string; reason?: string; now: number },
  ): Promise<Revocation> {
    const row: RevocationRow = {
      id: newId('revocation', r.now),
      scope: r.scope,
      value: r.value,
      revoked_at: r.now,
      revoked_by: r.by,
      reason: r.reason ?? null,
    };
    await tx.query(q.insertRevocation({ ...row, revoked_at: r.now }));
    return toRevocation(row);
  }

  /**
   * Whether any revocation covers these claims: by capability id, task, agent or tenant, made at or
   * after the second the token was issued (`iat` has second precision, so a token issued in the same
   * second as the revocation counts as revoked: the safe side of the rounding).
   */
  async isRevoked(claims: CapabilityClaims): Promise<boolean> {
    const rows = await this.db.query<{ n: number }>(
      q.selectCoveringRevocation({
        since: claims.iat * 1000,
        capabilityId: claims.jti,
        task: claims.task ?? '',
        agent: claims.agent ?? '',
        tenant: claims.tenant,
      }),
    );
    return rows.length > 0;
  }

  /** Inserts the freeze unless one is already in place; returns whether it is new. */
  async freeze(
    tx: Db,
    f: { scope: FreezeScope; value: string; by: string; reason?: string; now: number },
  ): Promise<boolean> {
    const rows = await tx.query(
      q.insertFreeze({ scope: f.scope, value: f.value, now: f.now, by: f.by, reason: f.reason ?? null }),
    );
    return rows.length > 0;
  }

  /** Returns whether a freeze was lifted (false: it was not frozen). */
  async unfreeze(tx: Db, f: { scope: FreezeScope; value: string }): Promise<boolean> {
    const rows = await tx.query(q.deleteFreeze(f.scope, f.value));
    return rows.length > 0;
  }

  async isFrozen(tenant: string, agent: string | null): Promise<boolean> {
    const rows = await this.db.query<{ n: number }>(q.selectFreezeOf(tenant, agent ?? ''));
    return rows.length > 0;
  }

  /** The freeze over the tenant or the agent named, as a refusal says it; undefined when neither is frozen. */
  async freezeReason(tenant: string, agent: string | null): Promise<string | undefined> {
    const [row] = await this.db.query<{
      scope: string;
      value: string;
      frozen_by: string;
      reason: string | null;
    }>(q.selectFreezeReasonOf(tenant, agent ?? ''));
    if (!row) return undefined;
    const lift = `switchboard incidents unfreeze --${row.scope} ${row.value}`;
    return `${row.scope} ${row.value} is frozen to read-only by ${row.frozen_by}${row.reason ? ` (${row.reason})` : ''}; ${lift} lifts it`;
  }

  async list(): Promise<{ freezes: Freeze[]; revocations: Revocation[] }> {
    const freezes = await this.db.query<FreezeRow>(q.selectFreezes());
    const revocations = await this.db.query<RevocationRow>(q.selectRecentRevocations(LISTED_REVOCATIONS));
    return {
      freezes: freezes.map((f) => ({ ...f, frozen_at: iso(f.frozen_at) })),
      revocations: revocations.map(toRevocation),
    };
  }
}

function toRevocation(r: RevocationRow): Revocation {
  return { ...r, revoked_at: iso(r.revoked_at) };
}
