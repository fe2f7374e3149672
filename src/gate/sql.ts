import type { Sql } from '../store/port.js';

/**
 * Every SQL statement of the gate module, as pure functions over the one-method DB port: the incident
 * tables, `capability_revocations` (history, append-only) and `freezes` (one row while frozen).
 * `service/incidents-store.ts` types the rows.
 */

export function insertRevocation(r: {
  id: string;
  scope: string;
  value: string;
  revoked_at: number;
  revoked_by: string;
  reason: string | null;
}): Sql {
  return {
    text: `INSERT INTO capability_revocations (id, scope, value, revoked_at, revoked_by, reason)
             VALUES ($1, $2, $3, $4, $5, $6)`,
    values: [r.id, r.scope, r.value, r.revoked_at, r.revoked_by, r.reason],
  };
}

/** A row back when a revocation made at or after `since` covers the capability, task, agent or tenant. */
export function selectCoveringRevocation(c: {
  since: number;
  capabilityId: string;
  task: string;
  agent: string;
  tenant: string;
}): Sql {
  return {
    text: `SELECT 1 AS n FROM capability_revocations
             WHERE revoked_at >= $1 AND (
               (scope = 'capability' AND value = $2) OR (scope = 'task' AND value = $3)
               OR (scope = 'agent' AND value = $4) OR (scope = 'tenant' AND value = $5))
             LIMIT 1`,
    values: [c.since, c.capabilityId, c.task, c.agent, c.tenant],
  };
}

/** No row back when the freeze is already in place. */
export function insertFreeze(f: {
  scope: string;
  value: string;
  now: number;
  by: string;
  reason: string | null;
}): Sql {
  return {
    text: `INSERT INTO freezes (scope, value, frozen_at, frozen_by, reason) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (scope, value) DO NOTHING RETURNING scope`,
    values: [f.scope, f.value, f.now, f.by, f.reason],
  };
}

export function deleteFreeze(scope: string, value: string): Sql {
  return {
    text: 'DELETE FROM freezes WHERE scope = $1 AND value = $2 RETURNING scope',
    values: [scope, value],
  };
}

export function selectFreezeOf(tenant: string, agent: string): Sql {
  return {
    text: `SELECT 1 AS n FROM freezes
             WHERE (scope = 'tenant' AND value = $1) OR (scope = 'agent' AND value = $2) LIMIT 1`,
    values: [tenant, agent],
  };
}

/** The freeze over a tenant or one of its agents, the tenant's first: what a refusal names. */
export function selectFreezeReasonOf(tenant: string, agent: string): Sql {
  return {
    text: `SELECT scope, value, frozen_by, reason FROM freezes
             WHERE (scope = 'tenant' AND value = $1) OR (scope = 'agent' AND value = $2)
             ORDER BY scope DESC LIMIT 1`,
    values: [tenant, agent],
  };
}

export function selectFreezes(): Sql {
  return {
    text: 'SELECT scope, value, frozen_at, frozen_by, reason FROM freezes ORDER BY frozen_at, scope, value',
  };
}

/** The newest revocations: enough for an operator's list, bounded however long the history grows. */
export function selectRecentRevocations(limit: number): Sql {
  return {
    text: `SELECT id, scope, value, revoked_at, revoked_by, reason FROM capability_revocations
             ORDER BY revoked_at DESC, id DESC LIMIT $1`,
    values: [limit],
  };
}

/** One decided intent of a session's (or task's) history; a repeat of the same request is a no-op. */
export function insertHistory(h: {
  eventId: string;
  key: string;
  at: number;
  kind: string;
  tool: string;
  decision: string;
  untrusted: boolean;
  paths: string;
  host: string;
}): Sql {
  return {
    text: `INSERT INTO gate_history (event_id, session_key, at, kind, tool, decision, untrusted, paths, host)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (event_id) DO NOTHING`,
    values: [h.eventId, h.key, h.at, h.kind, h.tool, h.decision, h.untrusted ? 1 : 0, h.paths, h.host],
  };
}

/** The newest `limit` entries of a key before `before` (ms), newest first. */
export function selectHistory(key: string, before: number, limit: number): Sql {
  return {
    text: `SELECT at, kind, tool, decision, untrusted, paths, host FROM gate_history
             WHERE session_key = $1 AND at < $2 ORDER BY at DESC, event_id DESC LIMIT $3`,
    values: [key, before, limit],
  };
}

/** Drops a key's entries older than its newest `keep`. */
export function trimHistory(key: string, keep: number): Sql {
  return {
    text: `DELETE FROM gate_history WHERE session_key = $1 AND event_id NOT IN (
             SELECT event_id FROM gate_history WHERE session_key = $1 ORDER BY at DESC, event_id DESC LIMIT $2)`,
    values: [key, keep],
  };
}

/** Marks a session untrusted from `since`; the first mark stays. */
export function insertUntrustedSession(key: string, since: number, source: string): Sql {
  return {
    text: `INSERT INTO gate_untrusted_sessions (session_key, since, source) VALUES ($1, $2, $3)
             ON CONFLICT (session_key) DO NOTHING`,
    values: [key, since, source],
  };
}

export function selectUntrustedSession(key: string): Sql {
  return { text: 'SELECT since FROM gate_untrusted_sessions WHERE session_key = $1', values: [key] };
}
