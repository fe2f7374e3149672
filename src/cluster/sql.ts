import type { Dialect, Sql } from '../store/port.js';
import { sql } from '../store/port.js';

/** The lease's one row: there is one leader per store. */
export const LEASE_NAME = 'leader';

export interface ReplicaRow {
  id: string;
  name: string;
  host: string;
  pid: number;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
}

export interface LeaseRow {
  name: string;
  replica_id: string;
  token: number;
  acquired_at: number;
  expires_at: number;
}

export interface TermRow {
  token: number;
  replica_id: string;
  acquired_at: number;
}

/**
 * The database's clock in epoch milliseconds. Every lease comparison uses it, so replicas whose own
 * clocks disagree still agree on whether a lease has run out (docs/scale.md, "Replicas").
 */
function clock(d: Dialect): string {
  return d === 'postgres'
    ? '(extract(epoch from clock_timestamp()) * 1000)::bigint'
    : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

export function selectNow(d: Dialect): Sql {
  return { text: `SELECT ${clock(d)} AS now` };
}

export function upsertReplica(r: Omit<ReplicaRow, 'stopped_at'>): Sql {
  return sql(
    `INSERT INTO cluster_replicas (id, name, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
    r.id,
    r.name,
    r.host,
    r.pid,
    r.started_at,
    r.heartbeat_at,
  );
}

export function markStopped(id: string, now: number): Sql {
  return sql('UPDATE cluster_replicas SET stopped_at = $2, heartbeat_at = $2 WHERE id = $1', id, now);
}

/** Rows of processes long gone (a restart is a new replica), so the list stays short. */
export function pruneReplicas(before: number): Sql {
  return sql('DELETE FROM cluster_replicas WHERE heartbeat_at < $1', before);
}

/** Replicas silent since `before` or stopped (the rows `pruneReplicas` has not dropped yet). */
export function selectDeadReplicas(before: number): Sql {
  return sql(
    'SELECT id, host, pid FROM cluster_replicas WHERE stopped_at IS NOT NULL OR heartbeat_at < $1',
    before,
  );
}

export function listReplicas(limit: number): Sql {
  return sql(
    `SELECT id, name, host, pid, started_at, heartbeat_at, stopped_at FROM cluster_replicas
     ORDER BY started_at DESC, id DESC LIMIT $1`,
    limit,
  );
}

/** The lease, locked for the rest of the election's transaction (SQLite: the writer is the lock). */
export function lockLease(d: Dialect): Sql {
  const lock = d === 'postgres' ? ' FOR UPDATE' : '';
  return sql(
    `SELECT name, replica_id, token, acquired_at, expires_at FROM cluster_lease WHERE name = $1${lock}`,
    LEASE_NAME,
  );
}

export function selectLease(): Sql {
  return sql(
    'SELECT name, replica_id, token, acquired_at, expires_at FROM cluster_lease WHERE name = $1',
    LEASE_NAME,
  );
}

/** The first lease of a store; a racing replica's insert finds the row and does nothing. */
export function insertLease(replicaId: string, now: number, expiresAt: number): Sql {
  return sql(
    `INSERT INTO cluster_lease (name, replica_id, token, acquired_at, expires_at) VALUES ($1, $2, 1, $3, $4)
     ON CONFLICT (name) DO NOTHING RETURNING token`,
    LEASE_NAME,
    replicaId,
    now,
    expiresAt,
  );
}

/** The holder extends its own term; the token stays. */
export function renewLease(replicaId: string, token: number, expiresAt: number): Sql {
  return sql(
    'UPDATE cluster_lease SET expires_at = $4 WHERE name = $1 AND replica_id = $2 AND token = $3 RETURNING token',
    LEASE_NAME,
    replicaId,
    token,
    expiresAt,
  );
}

/** A new term: the next token, for this replica. Conditional on the token read, so two takeovers cannot both win. */
export function takeLease(replicaId: string, seenToken: number, now: number, expiresAt: number): Sql {
  return sql(
    `UPDATE cluster_lease SET replica_id = $2, token = token + 1, acquired_at = $4, expires_at = $5
     WHERE name = $1 AND token = $3 RETURNING token`,
    LEASE_NAME,
    replicaId,
    seenToken,
    now,
    expiresAt,
  );
}

export function insertTerm(token: number, replicaId: string, now: number): Sql {
  return sql(
    'INSERT INTO cluster_terms (token, replica_id, acquired_at) VALUES ($1, $2, $3) ON CONFLICT (token) DO NOTHING',
    token,
    replicaId,
    now,
  );
}

export function listTerms(limit: number): Sql {
  return sql('SELECT token, replica_id, acquired_at FROM cluster_terms ORDER BY token DESC LIMIT $1', limit);
}

/** A clean stop hands the lease back at once: the next replica's heartbeat takes it. */
export function releaseLease(replicaId: string, token: number): Sql {
  return sql(
    'UPDATE cluster_lease SET expires_at = 0 WHERE name = $1 AND replica_id = $2 AND token = $3',
    LEASE_NAME,
    replicaId,
    token,
  );
}

/**
 * The fencing check, inside the caller's transaction: the row is ours, with our token, and not run out.
 * `FOR SHARE` holds off a takeover (its UPDATE) until that transaction ends, so a write fenced here
 * commits under a term that was still this replica's.
 */
export function fenceLease(d: Dialect, replicaId: string, token: number): Sql {
  const lock = d === 'postgres' ? ' FOR SHARE' : '';
  return sql(
    `SELECT token FROM cluster_lease WHERE name = $1 AND replica_id = $2 AND token = $3 AND expires_at > ${clock(d)}${lock}`,
    LEASE_NAME,
    replicaId,
    token,
  );
}

/** Wakes every replica LISTENing on `channel`, at the commit of the transaction it runs in. */
export function notify(channel: string, payload: string): Sql {
  return sql('SELECT pg_notify($1, $2)', channel, payload);
}

export function currentSchema(): Sql {
  return { text: 'SELECT current_schema() AS schema' };
}
