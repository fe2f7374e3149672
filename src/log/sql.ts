import type { Dialect, Sql } from '../store/port.js';

/** All SQL of the log module, as pure functions (pg-boss style). */

export const GENESIS_HASH = '0'.repeat(64);

export function lockHead(dialect: Dialect): Sql {
  // PostgreSQL: the row lock serialises appends across replicas so the chain never forks. SQLite's
  // BEGIN IMMEDIATE already holds the only write lock.
  return {
    text: `SELECT seq, hash FROM log_head WHERE id = 1${dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
  };
}

/** The columns of an `events` row that queries filter on, each a copy of a field of the hashed body. */
export interface EventColumns {
  eventId: string;
  type: string;
  occurredAt: string;
  tenantId: string;
  correlationId: string;
  causationId: string | null;
  taskId: string | null;
  sessionId: string | null;
}

export type EventRow = EventColumns & {
  seq: number;
  body: string;
  prevHash: string;
  hash: string;
  recordedAt: number;
};

const EVENT_COLUMNS = 13;

/** Several chained events in one statement (SQLite), in seq order. */
export function insertEvents(rows: readonly EventRow[]): Sql {
  const marks = rows.map((_, r) => {
    const base = r * EVENT_COLUMNS;
    return `(${Array.from({ length: EVENT_COLUMNS }, (_, c) => `$${base + c + 1}`).join(', ')})`;
  });
  return {
    text: `INSERT INTO events (seq, event_id, type, occurred_at, tenant_id, correlation_id, causation_id, task_id, session_id, body, prev_hash, hash, recorded_at)
           VALUES ${marks.join(', ')}`,
    values: rows.flatMap((row) => [
      row.seq,
      row.eventId,
      row.type,
      row.occurredAt,
      row.tenantId,
      row.correlationId,
      row.causationId,
      row.taskId,
      row.sessionId,
      row.body,
      row.prevHash,
      row.hash,
      row.recordedAt,
    ]),
  };
}

/**
 * PostgreSQL: the whole append of one or many events (lock the head, hash each in turn, insert the
 * events and their outbox rows, move the head) as one statement, so a batch costs one round trip
 * however many events it holds. The rows travel as arrays; a recursive CTE chains the hashes in order
 * on the server with the same formula as `linkHash`: sha256(prev_hash || '\n' || body).
 */
export function appendPg(
  rows: readonly (EventColumns & { body: string })[],
  recordedAt: number,
  topic: string,
): Sql {
  const column = (pick: (r: EventColumns & { body: string }) => string | null) => rows.map(pick);
  return {
    prepare: 'log_append_v1',
    text: `WITH RECURSIVE h AS (SELECT seq, hash FROM log_head WHERE id = 1 FOR UPDATE),
      input AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
                  WITH ORDINALITY AS t(event_id, type, occurred_at, tenant_id, correlation_id, causation_id, task_id, session_id, body, ord)),
      chain AS (SELECT 0::bigint AS ord, h.seq, h.hash, NULL::text AS prev FROM h
                UNION ALL
                SELECT c.ord + 1, c.seq + 1, encode(sha256(convert_to(c.hash || E'\n' || i.body, 'UTF8')), 'hex'), c.hash
                  FROM chain c JOIN input i ON i.ord = c.ord + 1),
      ins AS (INSERT INTO events (seq, event_id, type, occurred_at, tenant_id, correlation_id, causation_id, task_id, session_id, body, prev_hash, hash, recorded_at)
              SELECT c.seq, i.event_id, i.type, i.occurred_at, i.tenant_id, i.correlation_id, i.causation_id, i.task_id, i.session_id, i.body, c.prev, c.hash, $10::bigint
                FROM chain c JOIN input i ON i.ord = c.ord),
      ob AS (INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at)
             SELECT i.event_id, $11::text, i.correlation_id, 'pending', 0, $10::bigint, $10::bigint FROM input i ORDER BY i.ord),
      last AS (SELECT seq, hash FROM chain ORDER BY ord DESC LIMIT 1)
      UPDATE log_head SET seq = last.seq, hash = last.hash FROM last WHERE log_head.id = 1 RETURNING log_head.seq`,
    values: [
      column((r) => r.eventId),
      column((r) => r.type),
      column((r) => r.occurredAt),
      column((r) => r.tenantId),
      column((r) => r.correlationId),
      column((r) => r.causationId),
      column((r) => r.taskId),
      column((r) => r.sessionId),
      column((r) => r.body),
      recordedAt,
      topic,
    ],
  };
}

export function updateHead(seq: number, hash: string): Sql {
  return { text: 'UPDATE log_head SET seq = $1, hash = $2 WHERE id = 1', values: [seq, hash] };
}

export function insertOutbox(eventId: string, topic: string, correlationId: string, now: number): Sql {
  return {
    text: `INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at)
           VALUES ($1, $2, $3, 'pending', 0, $4, $4)`,
    values: [eventId, topic, correlationId, now],
  };
}

/** Several events' rows on one topic, in the order given (their ids keep it), in one statement. */
export function insertOutboxMany(
  rows: readonly { eventId: string; correlationId: string }[],
  topic: string,
  now: number,
): Sql {
  return {
    text: `INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at)
           VALUES ${rows.map((_, i) => `($${i * 2 + 3}, $1, $${i * 2 + 4}, 'pending', 0, $2, $2)`).join(', ')}`,
    values: [topic, now, ...rows.flatMap((r) => [r.eventId, r.correlationId])],
  };
}

/**
 * SQLite, when the relay runs in this process: each event's outbox row is written already claimed by
 * `marker` under a lease, so the relay hands the event to its subscribers right after the commit without
 * a claim transaction. The row stays the crash-recovery path: a crash before its acknowledgement leaves
 * it claimed, and the claim takes it again once the lease has run out. When its correlation has an open
 * row that is not one of this relay's hand-offs (a retry waiting, a row another worker claimed or a dead
 * process leased), the row is written `pending` instead and takes the claim path behind it, so a later
 * event never overtakes an earlier one. Returns each row's id, event id and status (RETURNING's order is
 * not the insert's).
 *
 * One statement for the whole append (a touch's four events were four): the rows are inserted in the
 * order given, and each row's check sees only rows from before the statement. That answers as the rows
 * one at a time did, because a row this statement writes never makes a later one of its correlation
 * busy: it is either this marker's hand-off (which the check leaves out) or `pending` only because an
 * earlier open row was there, and that row is still there for the later one (handoff.test.ts).
 */
export function insertOutboxHandoffs(
  rows: readonly { eventId: string; correlationId: string }[],
  topic: string,
  now: number,
  h: { marker: string; leaseUntil: number },
): Sql {
  const busy = (correlation: string) =>
    `EXISTS (SELECT 1 FROM outbox p WHERE p.correlation_id = ${correlation} AND p.topic = $1 AND p.status IN ('pending', 'claimed')
                 AND (p.status = 'pending' OR p.last_error IS NOT $4))`;
  const [only] = rows;
  if (rows.length === 1 && only) {
    // One row (most appends): the same decision without the VALUES table, which SQLite materialises
    // for the join (in a loop of 5,000, 14.8 against 23.4 µs a statement; docs/ARCHITECTURE.md, the log).
    return {
      text: `INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, lease_until, last_error, created_at)
             SELECT $5, $1, $6, CASE WHEN b.busy THEN 'pending' ELSE 'claimed' END, 0, $2,
                    CASE WHEN b.busy THEN NULL ELSE $3 END, CASE WHEN b.busy THEN NULL ELSE $4 END, $2
               FROM (SELECT ${busy('$6')} AS busy) b
             RETURNING id, event_id, status`,
      values: [topic, now, h.leaseUntil, h.marker, only.eventId, only.correlationId],
    };
  }
  const values = rows.map((_, i) => `(${i}, $${i * 2 + 5}, $${i * 2 + 6})`).join(', ');
  return {
    text: `WITH v(ord, event_id, correlation_id) AS (VALUES ${values}),
           b AS (SELECT v.ord, v.event_id, v.correlation_id, ${busy('v.correlation_id')} AS busy FROM v)
           INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, lease_until, last_error, created_at)
           SELECT b.event_id, $1, b.correlation_id, CASE WHEN b.busy THEN 'pending' ELSE 'claimed' END, 0, $2,
                  CASE WHEN b.busy THEN NULL ELSE $3 END, CASE WHEN b.busy THEN NULL ELSE $4 END, $2 FROM b ORDER BY b.ord
           RETURNING id, event_id, status`,
    values: [topic, now, h.leaseUntil, h.marker, ...rows.flatMap((r) => [r.eventId, r.correlationId])],
  };
}

export interface EventFilter {
  correlationId?: string;
  taskId?: string;
  type?: string;
  afterSeq?: number;
  /** Only events before this seq: the console pages back through the log with it. */
  beforeSeq?: number;
  /** `occurred_at` bounds (ISO 8601, compared as text: every envelope's time is UTC with a Z). */
  since?: string;
  until?: string;
  sessionId?: string;
  /** Newest first (the console reads the most recent events); oldest first by default. */
  newestFirst?: boolean;
  limit: number;
}

export function selectEvents(dialect: Dialect, f: EventFilter): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    values.push(value);
    where.push(clause.replace('?', `$${values.length}`));
  };
  if (f.correlationId) add('correlation_id = ?', f.correlationId);
  if (f.taskId) add('task_id = ?', f.taskId);
  // `agent.*` is a byte range, not LIKE: SQLite's LIKE ignores case and PostgreSQL's needs a pattern
  // index, so neither would use events_type. PostgreSQL compares in the C collation, as its index does.
  const type = dialect === 'postgres' ? 'type COLLATE "C"' : 'type';
  if (f.type?.endsWith('.*')) {
    const prefix = f.type.slice(0, -1);
    add(`${type} >= ?`, prefix);
    add(`${type} < ?`, prefixEnd(prefix));
  } else if (f.type) add(`${type} = ?`, f.type);
  if (f.afterSeq !== undefined) add('seq > ?', f.afterSeq);
  if (f.beforeSeq !== undefined) add('seq < ?', f.beforeSeq);
  if (f.since) add('occurred_at >= ?', f.since);
  if (f.until) add('occurred_at < ?', f.until);
  if (f.sessionId) add('session_id = ?', f.sessionId);
  values.push(f.limit);
  return {
    text: `SELECT seq, body FROM events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq${f.newestFirst ? ' DESC' : ''} LIMIT $${values.length}`,
    values,
  };
}

/** The first string after every string that starts with `prefix` (`agent.` → `agent/`). */
function prefixEnd(prefix: string): string {
  const last = prefix.codePointAt(prefix.length - 1) ?? 0;
  return prefix.slice(0, -1) + String.fromCodePoint(last + 1);
}

export function selectChainPage(afterSeq: number, limit: number): Sql {
  return {
    text: `SELECT seq, event_id, type, occurred_at, tenant_id, correlation_id, causation_id, task_id, session_id,
             body, prev_hash, hash FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`,
    values: [afterSeq, limit],
  };
}

export function selectHead(): Sql {
  return { text: 'SELECT seq, hash FROM log_head WHERE id = 1' };
}

export function selectEventBodies(eventIds: readonly string[]): Sql {
  return {
    text: `SELECT event_id, body FROM events WHERE event_id IN (${eventIds.map((_, i) => `$${i + 1}`).join(', ')})`,
    values: [...eventIds],
  };
}

export function selectEventBody(eventId: string): Sql {
  return { text: 'SELECT seq, body FROM events WHERE event_id = $1', values: [eventId] };
}

/** Outbox rows whose event every subscriber has handled. */
export function deleteOutboxRows(ids: readonly number[]): Sql {
  return {
    text: `DELETE FROM outbox WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
    values: [...ids],
  };
}

/** The outbox rows not parked as `dead`: the relay's backlog (the `outbox_depth` gauge). */
export function countOpenOutbox(): Sql {
  return { text: "SELECT COUNT(*) AS n FROM outbox WHERE status <> 'dead'" };
}

/** The most relay attempts any outbox row of each event has had (an event has one row per topic). */
export function selectOutboxAttempts(eventIds: readonly string[]): Sql {
  return {
    text: `SELECT event_id, MAX(attempts) AS attempts FROM outbox
            WHERE event_id IN (${eventIds.map((_, i) => `$${i + 1}`).join(', ')}) GROUP BY event_id`,
    values: [...eventIds],
  };
}

/**
 * The claimed row's event type, read beside the claim (a lookup in `events` per row) unless `types` is
 * false: a relay whose subscribers take every event (the NATS relay) needs none, and the body says it.
 */
function claimedType(types = true): string {
  return types ? '(SELECT e.type FROM events e WHERE e.event_id = outbox.event_id) AS type' : 'NULL AS type';
}

/**
 * The relay's claim: only the oldest open row of a correlation on the topic can be claimed, so a later
 * event never overtakes an earlier one, even across processes, and a topic's retries never hold up
 * another topic's rows (PostgreSQL: `SKIP LOCKED` lets replicas claim side
 * by side). The event's type comes back with the row: a row no subscriber accepts needs no body read.
 */
export function claimOutbox(
  dialect: Dialect,
  c: { topic: string; now: number; leaseUntil: number; claimedBy: string; limit: number; types?: boolean },
): Sql {
  if (dialect === 'sqlite') {
    // One writer, no locks to skip: a correlation's head is the least open id of the topic, found in
    // one pass over the open rows instead of a search of each ready row's predecessors (which walks
    // every other topic's rows of the correlation too: the NATS topic's claim behind a bus backlog).
    return {
      text: `UPDATE outbox SET status = 'claimed', lease_until = $1, last_error = $2
               WHERE id IN (
                 SELECT o.id FROM outbox o
                 WHERE o.id IN (SELECT min(h.id) FROM outbox h
                                WHERE h.topic = $3 AND h.status IN ('pending', 'claimed')
                                GROUP BY h.correlation_id)
                   AND ((o.status = 'pending' AND o.available_at <= $4) OR (o.status = 'claimed' AND o.lease_until < $4))
                 ORDER BY o.id LIMIT $5)
               RETURNING id, event_id, attempts, correlation_id,
                 ${claimedType(c.types)}`,
      values: [c.leaseUntil, c.claimedBy, c.topic, c.now, c.limit],
    };
  }
  const lock = 'FOR UPDATE SKIP LOCKED';
  // The probe of a correlation's earlier rows says `status <> 'dead'` (the open statuses, as a test no
  // index on status can serve), so the planner reads it through outbox_correlation alone. Without
  // statistics (a fresh table before its first ANALYZE, or autovacuum off) it otherwise ANDed in the
  // outbox_ready bitmap of every open row, once per candidate: 4 to 16 s per claim at 7,000 open rows
  // (the replicas test's flood), 0.1 s this way.
  return {
    text: `UPDATE outbox SET status = 'claimed', lease_until = $1, last_error = $2
             WHERE id IN (
               SELECT o.id FROM outbox o
               WHERE o.topic = $3
                 AND ((o.status = 'pending' AND o.available_at <= $4) OR (o.status = 'claimed' AND o.lease_until < $4))
                 AND NOT EXISTS (
                   SELECT 1 FROM outbox p
                   WHERE p.correlation_id = o.correlation_id AND p.topic = o.topic AND p.id < o.id
                     AND p.status <> 'dead')
               ORDER BY o.id LIMIT $5 ${lock})
             RETURNING id, event_id, attempts, correlation_id,
               ${claimedType(c.types)}`,
    values: [c.leaseUntil, c.claimedBy, c.topic, c.now, c.limit],
  };
}

/**
 * The rows queued behind correlations whose oldest open row this worker holds (`claimedBy`, under a
 * live lease): the run of ready `pending` rows that follows it, up to the first row that is not ready
 * (a retry waiting out its delay) or held by another worker. Run after `claimOutbox` in the same
 * transaction, it lets one claim take many rows of a correlation, which the relay then hands out one
 * after another (a pipelined relay, `RelayOptions.pipeline`). No other worker can claim these rows
 * meanwhile: `claimOutbox` takes only a correlation's oldest open row, and this statement only behind
 * a head the claimer holds; so no `SKIP LOCKED` is needed either.
 */
export function claimOutboxFollowers(
  dialect: Dialect,
  c: {
    topic: string;
    now: number;
    leaseUntil: number;
    claimedBy: string;
    limit: number;
    types?: boolean;
  },
): Sql {
  // Per correlation, not per row: the correlations whose oldest open row is the claimer's, then the
  // first row of each that stops the run (not ready, or another's), then the ready rows before it,
  // read through the correlation index (SQLite would otherwise scan every ready row per correlation).
  // Each probe of one correlation's rows names statuses by what they are not (pending, claimed and dead
  // are all there are), which no index on status can serve: PostgreSQL without statistics otherwise
  // scanned outbox_ready's every pending row per correlation (1.4 s at 7,000 open rows, 16 ms this way).
  return {
    text: `WITH held AS MATERIALIZED (
               SELECT DISTINCT h.correlation_id FROM outbox h
               WHERE h.topic = $3 AND h.status = 'claimed' AND h.last_error = $2 AND h.lease_until >= $4
                 AND h.id = (SELECT min(f.id) FROM outbox f
                             WHERE f.correlation_id = h.correlation_id AND f.topic = h.topic
                               AND f.status <> 'dead')),
             runs AS MATERIALIZED (
               SELECT held.correlation_id,
                 (SELECT min(p.id) FROM outbox p
                  WHERE p.correlation_id = held.correlation_id AND p.topic = $3
                    AND ((p.status NOT IN ('claimed', 'dead') AND p.available_at > $4)
                      OR (p.status NOT IN ('pending', 'dead') AND (p.last_error <> $2 OR p.lease_until < $4)))) AS stop
               FROM held)
           UPDATE outbox SET status = 'claimed', lease_until = $1, last_error = $2
             WHERE id IN (
               SELECT o.id FROM runs r CROSS JOIN outbox o${dialect === 'sqlite' ? ' INDEXED BY outbox_correlation' : ''}
               WHERE o.correlation_id = r.correlation_id AND o.id < coalesce(r.stop, ${Number.MAX_SAFE_INTEGER})
                 AND o.topic = $3 AND o.status NOT IN ('claimed', 'dead') AND o.available_at <= $4
               ORDER BY o.id LIMIT $5)
             RETURNING id, event_id, attempts, correlation_id,
               ${claimedType(c.types)}`,
    values: [c.leaseUntil, c.claimedBy, c.topic, c.now, c.limit],
  };
}

/**
 * A subscriber failed on the row: back to `pending` after a delay, or parked as `dead`; a dead row
 * keeps the failing subscriber's name and version, and when it was parked.
 */
export function releaseOutboxRow(r: {
  id: number;
  status: 'pending' | 'dead';
  attempts: number;
  availableAt: number;
  error: string;
  consumer?: string | null;
  consumerVersion?: string | null;
  deadAt?: number | null;
}): Sql {
  return {
    text: `UPDATE outbox SET status = $1, attempts = $2, available_at = $3, lease_until = NULL, last_error = $4,
             consumer = $6, consumer_version = $7, dead_at = $8 WHERE id = $5`,
    values: [
      r.status,
      r.attempts,
      r.availableAt,
      r.error,
      r.id,
      r.consumer ?? null,
      r.consumerVersion ?? null,
      r.status === 'dead' ? (r.deadAt ?? r.availableAt) : null,
    ],
  };
}

export interface DeadOutboxRow {
  id: number | string;
  event_id: string;
  topic: string;
  type: string | null;
  correlation_id: string;
  attempts: number | string;
  last_error: string | null;
  consumer: string | null;
  consumer_version: string | null;
  dead_at: number | string | null;
  created_at: number | string;
}

/** Rows parked as dead, oldest first, with their event's type. */
export function selectDeadOutbox(limit: number, ids?: readonly number[]): Sql {
  const byId = ids && ids.length > 0 ? ` AND o.id IN (${ids.map((_, i) => `$${i + 2}`).join(', ')})` : '';
  return {
    text: `SELECT o.id, o.event_id, o.topic, (SELECT e.type FROM events e WHERE e.event_id = o.event_id) AS type,
                  o.correlation_id, o.attempts, o.last_error, o.consumer, o.consumer_version, o.dead_at, o.created_at
           FROM outbox o WHERE o.status = 'dead'${byId} ORDER BY o.id LIMIT $1`,
    values: [limit, ...(ids ?? [])],
  };
}

/**
 * Dead rows back to `pending`, attempts from zero, claimable now (the relay runs every subscriber
 * again; those that handled the event already skip it by their inbox). Returns the rows moved.
 */
export function replayDeadOutbox(ids: readonly number[] | 'all', now: number): Sql {
  const where = ids === 'all' ? '' : ` AND id IN (${ids.map((_, i) => `$${i + 2}`).join(', ')})`;
  return {
    text: `UPDATE outbox SET status = 'pending', attempts = 0, available_at = $1, lease_until = NULL
           WHERE status = 'dead'${where} RETURNING id, event_id`,
    values: [now, ...(ids === 'all' ? [] : ids)],
  };
}

/** Records that `consumer` handled the event; no row back when it already had. */
export function insertInbox(consumer: string, eventId: string, now: number): Sql {
  return {
    text: `INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)
           ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
    values: [consumer, eventId, now],
  };
}

export function selectInbox(consumer: string, eventId: string): Sql {
  return {
    text: 'SELECT 1 AS x FROM inbox WHERE consumer = $1 AND event_id = $2',
    values: [consumer, eventId],
  };
}

export function insertVaultPayload(r: {
  ref: string;
  tenantId: string;
  digest: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
  keyId: string;
  createdAt: number;
  expiresAt: number | null;
}): Sql {
  return {
    text: `INSERT INTO vault (ref, tenant_id, digest, iv, tag, ciphertext, key_id, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    values: [r.ref, r.tenantId, r.digest, r.iv, r.tag, r.ciphertext, r.keyId, r.createdAt, r.expiresAt],
  };
}

export function selectVaultPayload(ref: string): Sql {
  return { text: 'SELECT iv, tag, ciphertext, expires_at FROM vault WHERE ref = $1', values: [ref] };
}

export function deleteExpiredVaultPayloads(now: number): Sql {
  return {
    text: 'DELETE FROM vault WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING ref',
    values: [now],
  };
}
