import type { Dialect, Sql } from '../../store/port.js';

/**
 * Every statement of the delivery engine, as pure functions returning `Sql` (`$1…$n` in both
 * dialects). The claim is the one place the dialects differ: PostgreSQL adds `FOR UPDATE SKIP
 * LOCKED` so several processes never claim the same row; SQLite has one writer at a time, so the
 * same UPDATE … RETURNING is already exclusive.
 */

export type DeliveryStatus = 'pending' | 'claimed' | 'succeeded' | 'dead' | 'unknown' | 'reconcile';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'pending',
  'claimed',
  'succeeded',
  'dead',
  'unknown',
  'reconcile',
];

export interface DeliveryRow {
  id: string;
  event_id: string;
  correlation_id: string;
  destination: string;
  channel_type: string;
  message: string | null;
  payload_ref: string | null;
  status: DeliveryStatus;
  /** 1: the priority lane (claimed first, retried until delivered); 0: normal. */
  priority: number;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  last_status: number | null;
  last_error: string | null;
  last_response: string | null;
  created_at: number;
  updated_at: number;
}

export interface EndpointRow {
  destination: string;
  breaker: string;
  bucket: string;
  disabled: number;
  updated_at: number;
}

const COLUMNS =
  'id, event_id, correlation_id, destination, channel_type, message, payload_ref, status, priority, attempts, next_attempt_at, lease_until, last_status, last_error, last_response, created_at, updated_at';

export function insertDelivery(d: {
  id: string;
  eventId: string;
  correlationId: string;
  destination: string;
  channelType: string;
  message: string | null;
  payloadRef: string | null;
  priority: number;
  nextAttemptAt: number;
  now: number;
  /**
   * `dead` for a delivery refused at enqueue (a blocked URL): it is never claimed. `claimed` (with
   * `leaseUntil`) for one this process sends right after the commit (`DeliveryPort.enqueueNow`).
   */
  status?: 'pending' | 'dead' | 'claimed';
  lastError?: string | null;
  leaseUntil?: number;
}): Sql {
  return {
    text: `INSERT INTO deliveries (id, event_id, correlation_id, destination, channel_type, message, payload_ref, status, priority, attempts, next_attempt_at, last_error, created_at, updated_at, lease_until)
VALUES ($1, $2, $3, $4, $5, $6, $7, $11, $10, 0, $8, $12, $9, $9, $13)
ON CONFLICT (event_id, destination) DO NOTHING RETURNING id`,
    values: [
      d.id,
      d.eventId,
      d.correlationId,
      d.destination,
      d.channelType,
      d.message,
      d.payloadRef,
      d.nextAttemptAt,
      d.now,
      d.priority,
      d.status ?? 'pending',
      d.lastError ?? null,
      d.leaseUntil ?? null,
    ],
  };
}

export function deliveryIdFor(eventId: string, destination: string): Sql {
  return {
    text: 'SELECT id FROM deliveries WHERE event_id = $1 AND destination = $2',
    values: [eventId, destination],
  };
}

/**
 * Claims up to `limit` due rows of one lane: pending or unknown (a de-duplicating destination's
 * retry) whose time has come. Oldest due first, so a backlog drains in order. The engine claims the
 * priority lane first; one lane per statement keeps each claim on an index, with no sort of the
 * whole backlog.
 */
export function claimDue(
  dialect: Dialect,
  now: number,
  leaseUntil: number,
  limit: number,
  priority: number,
): Sql {
  const lock = dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
  return {
    text: `UPDATE deliveries SET status = 'claimed', lease_until = $1, updated_at = $2
WHERE id IN (SELECT id FROM deliveries WHERE status IN ('pending', 'unknown') AND priority = $4 AND next_attempt_at <= $2
  ORDER BY next_attempt_at LIMIT $3${lock})
RETURNING ${COLUMNS}`,
    values: [leaseUntil, now, limit, priority],
  };
}

/**
 * Rows whose worker died mid-attempt (the lease ran out): the request may have gone out. A
 * de-duplicating destination (`webhook`) is simply due again; any other goes to reconciliation,
 * never a blind resend. The lost attempt counts.
 */
export function expireLeases(dialect: Dialect, now: number, dedupTypes: readonly string[]): Sql {
  const lock = dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
  const types = dedupTypes.map((_, i) => `$${i + 2}`).join(', ') || "''";
  return {
    text: `UPDATE deliveries SET
  status = CASE WHEN channel_type IN (${types}) THEN 'pending' ELSE 'reconcile' END,
  attempts = attempts + 1, next_attempt_at = $1, lease_until = NULL, updated_at = $1,
  last_error = 'lease expired: the worker stopped mid-attempt'
WHERE id IN (SELECT id FROM deliveries WHERE status = 'claimed' AND lease_until <= $1 LIMIT 1000${lock})
RETURNING id, event_id, correlation_id, destination, channel_type, status, attempts`,
    values: [now, ...dedupTypes],
  };
}

/** Puts a claimed row back without counting an attempt (breaker open, rate limit, endpoint paused). */
export function deferDelivery(id: string, at: number, now: number, why: string): Sql {
  return {
    text: `UPDATE deliveries SET status = 'pending', next_attempt_at = $2, lease_until = NULL, updated_at = $3, last_error = $4
WHERE id = $1 AND status = 'claimed'`,
    values: [id, at, now, why],
  };
}

export function finishDelivery(d: {
  id: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  lastResponse: string | null;
  now: number;
}): Sql {
  return {
    text: `UPDATE deliveries SET status = $2, attempts = $3, next_attempt_at = $4, lease_until = NULL,
  last_status = $5, last_error = $6, last_response = $7, updated_at = $8
WHERE id = $1`,
    values: [d.id, d.status, d.attempts, d.nextAttemptAt, d.lastStatus, d.lastError, d.lastResponse, d.now],
  };
}

/**
 * `finishDelivery` for a batch in one statement (the engine settles a pass's attempts together): the
 * values ride in a VALUES list, whose columns are `column1…` in both dialects, cast because PostgreSQL
 * reads an untyped parameter there as text. Pinned by engine.test.ts (every row of a batch settled).
 */
export function finishDeliveries(
  rows: readonly Omit<Parameters<typeof finishDelivery>[0], 'now'>[],
  now: number,
): Sql {
  const values: unknown[] = [now];
  const tuples = rows.map((r) => {
    const at = values.length;
    values.push(r.id, r.status, r.attempts, r.nextAttemptAt, r.lastStatus, r.lastError, r.lastResponse);
    const types = ['TEXT', 'TEXT', 'INTEGER', 'BIGINT', 'INTEGER', 'TEXT', 'TEXT'];
    return `(${types.map((t, i) => `CAST($${at + i + 1} AS ${t})`).join(', ')})`;
  });
  return {
    text: `UPDATE deliveries SET status = v.column2, attempts = v.column3, next_attempt_at = v.column4,
  lease_until = NULL, last_status = v.column5, last_error = v.column6, last_response = v.column7, updated_at = $1
FROM (VALUES ${tuples.join(', ')}) AS v
WHERE deliveries.id = v.column1`,
    values,
  };
}

export function selectEndpoint(dialect: Dialect, destination: string): Sql {
  return {
    text: `SELECT destination, breaker, bucket, disabled, updated_at FROM endpoints WHERE destination = $1${dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
    values: [destination],
  };
}

export function upsertEndpoint(e: {
  destination: string;
  breaker: string;
  bucket: string;
  disabled: boolean;
  now: number;
}): Sql {
  return {
    text: `INSERT INTO endpoints (destination, breaker, bucket, disabled, updated_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (destination) DO UPDATE SET breaker = $2, bucket = $3, disabled = $4, updated_at = $5`,
    values: [e.destination, e.breaker, e.bucket, e.disabled ? 1 : 0, e.now],
  };
}

/** Creates the row if missing so the `FOR UPDATE` that follows has something to lock. */
export function ensureEndpoint(destination: string, breaker: string, bucket: string, now: number): Sql {
  return {
    text: `INSERT INTO endpoints (destination, breaker, bucket, disabled, updated_at) VALUES ($1, $2, $3, 0, $4)
ON CONFLICT (destination) DO NOTHING`,
    values: [destination, breaker, bucket, now],
  };
}

export function listEndpoints(): Sql {
  return {
    text: 'SELECT destination, breaker, bucket, disabled, updated_at FROM endpoints ORDER BY destination',
  };
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  destination?: string;
  ids?: readonly string[];
  from?: number;
  to?: number;
  limit: number;
  newestFirst?: boolean;
}

export function selectDeliveries(f: DeliveryFilter, statuses?: readonly DeliveryStatus[]): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: (p: string) => string, v: unknown) => {
    values.push(v);
    where.push(clause(`$${values.length}`));
  };
  if (f.status) add((p) => `status = ${p}`, f.status);
  if (statuses) {
    const ps = statuses.map((s) => {
      values.push(s);
      return `$${values.length}`;
    });
    where.push(`status IN (${ps.join(', ')})`);
  }
  if (f.destination) add((p) => `destination = ${p}`, f.destination);
  if (f.from !== undefined) add((p) => `created_at >= ${p}`, f.from);
  if (f.to !== undefined) add((p) => `created_at < ${p}`, f.to);
  if (f.ids) {
    const ps = f.ids.map((id) => {
      values.push(id);
      return `$${values.length}`;
    });
    where.push(`id IN (${ps.join(', ') || "''"})`);
  }
  values.push(f.limit);
  return {
    text: `SELECT ${COLUMNS} FROM deliveries${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${f.newestFirst ? 'created_at DESC, id DESC' : 'created_at, id'} LIMIT $${values.length}`,
    values,
  };
}

/** A replay: a fresh schedule under the current config (the channel's type may have changed). */
export function replayDelivery(id: string, channelType: string, now: number): Sql {
  return {
    text: `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3, channel_type = $2, lease_until = NULL,
  reconcile_checks = 0, reconcile_next_at = NULL, updated_at = $3
WHERE id = $1 AND status IN ('dead', 'reconcile') RETURNING id`,
    values: [id, channelType, now],
  };
}

export function countByStatus(): Sql {
  return { text: 'SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status' };
}

/**
 * Deliveries in `reconcile` the reconciler may ask about now: unknown for at least `settledBefore`
 * (a message takes a moment to show in a channel's history), under the check cap, due; with the checks
 * made so far, which the next one's backoff is computed from.
 */
export function selectReconcilable(
  now: number,
  settledBefore: number,
  maxChecks: number,
  limit: number,
): Sql {
  return {
    text: `SELECT ${COLUMNS}, reconcile_checks FROM deliveries
WHERE status = 'reconcile' AND reconcile_checks < $3 AND updated_at <= $2
  AND (reconcile_next_at IS NULL OR reconcile_next_at <= $1)
ORDER BY updated_at, id LIMIT $4`,
    values: [now, settledBefore, maxChecks, limit],
  };
}

/** The provider has it: delivered after all, with the provider's id when it gave one. */
export function reconcileFound(id: string, now: number): Sql {
  return {
    text: `UPDATE deliveries SET status = 'succeeded', last_error = NULL, reconcile_next_at = NULL, updated_at = $2
WHERE id = $1 AND status = 'reconcile' RETURNING id`,
    values: [id, now],
  };
}

/** The provider does not have it (or de-duplicates a second send): due again, checks reset. */
export function reconcileResend(id: string, now: number, why: string): Sql {
  return {
    text: `UPDATE deliveries SET status = 'pending', next_attempt_at = $2, lease_until = NULL, last_error = $3,
  reconcile_checks = 0, reconcile_next_at = NULL, updated_at = $2
WHERE id = $1 AND status = 'reconcile' RETURNING id`,
    values: [id, now, why],
  };
}

/**
 * Asked, not settled: `nextAt` null parks it for a person (checks at the cap); otherwise one more check
 * is counted and the next is due then.
 */
export function reconcileChecked(id: string, why: string, nextAt: number | null, cap: number): Sql {
  return {
    text: `UPDATE deliveries SET last_error = $2,
  reconcile_checks = CASE WHEN $5 = 1 THEN $4 ELSE reconcile_checks + 1 END,
  reconcile_next_at = $3
WHERE id = $1 AND status = 'reconcile' RETURNING id`,
    values: [id, why, nextAt, cap, nextAt === null ? 1 : 0],
  };
}

// ── channel_credentials: channels whose credential the provider refused (revoked.ts) ──

export interface ChannelCredentialRow {
  destination: string;
  status: 'revoked';
  channel_type: string;
  reason: string;
  fingerprint: string;
  since: number | string;
  event_id: string;
}

export function selectRevokedChannels(): Sql {
  return {
    text: 'SELECT destination, status, channel_type, reason, fingerprint, since, event_id FROM channel_credentials ORDER BY since, destination',
  };
}

/** The revocation mark of one channel, if it has one (`admitNow`: a marked channel is the claim's). */
export function selectRevokedChannel(destination: string): Sql {
  return { text: 'SELECT 1 AS n FROM channel_credentials WHERE destination = $1', values: [destination] };
}

/** No row back when the channel is already marked revoked. */
export function markChannelRevoked(r: {
  destination: string;
  channelType: string;
  reason: string;
  fingerprint: string;
  since: number;
  eventId: string;
}): Sql {
  return {
    text: `INSERT INTO channel_credentials (destination, status, channel_type, reason, fingerprint, since, event_id)
VALUES ($1, 'revoked', $2, $3, $4, $5, $6) ON CONFLICT (destination) DO NOTHING RETURNING destination`,
    values: [r.destination, r.channelType, r.reason, r.fingerprint, r.since, r.eventId],
  };
}

/** Lifts the mark; returns the row it was, none when the channel was not revoked. */
export function clearChannelRevoked(destination: string): Sql {
  return {
    text: 'DELETE FROM channel_credentials WHERE destination = $1 RETURNING destination, reason, since',
    values: [destination],
  };
}
