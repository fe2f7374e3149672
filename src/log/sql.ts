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

export function insertEvent(row: {
  seq: number;
  eventId: string;
  type: string;
  occurredAt: string;
  tenantId: string;
  correlationId: string;
  causationId: string | null;
  taskId: string | null;
  sessionId: string | null;
  body: string;
  prevHash: string;
  hash: string;
  recordedAt: number;
}): Sql {
  return {
    text: `INSERT INTO events (seq, event_id, type, occurred_at, tenant_id, correlation_id, causation_id, task_id, session_id, body, prev_hash, hash, recorded_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    values: [
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
    ],
  };
}

/**
 * PostgreSQL: the whole append (lock the head, hash, insert the event and its outbox row, move the head)
 * as one statement, so an append outside a caller's transaction costs one round trip. The hash is
 * computed by the server with the same formula as `linkHash`: sha256(prev_hash || '\n' || body).
 */
export function appendPg(row: {
  eventId: string;
  type: string;
  occurredAt: string;
  tenantId: string;
  correlationId: string;
  causationId: string | null;
  taskId: string | null;
  sessionId: string | null;
  body: string;
  recordedAt: number;
  topic: string;
}): Sql {
  return {
    text: `WITH h AS (SELECT seq, hash FROM log_head WHERE id = 1 FOR UPDATE),
      n AS (SELECT h.seq + 1 AS seq, h.hash AS prev,
                   encode(sha256(convert_to(h.hash || E'\n' || $9::text, 'UTF8')), 'hex') AS hash FROM h),
      ins AS (INSERT INTO events (seq, event_id, type, occurred_at, tenant_id, correlation_id, causation_id, task_id, session_id, body, prev_hash, hash, recorded_at)
              SELECT n.seq, $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, n.prev, n.hash, $10::bigint FROM n
              RETURNING seq, hash),
      ob AS (INSERT INTO outbox (event_id, topic, correlation_id, status, attempts, available_at, created_at)
             VALUES ($1::text, $11::text, $5::text, 'pending', 0, $10::bigint, $10::bigint))
      UPDATE log_head SET seq = ins.seq, hash = ins.hash FROM ins WHERE log_head.id = 1 RETURNING log_head.seq`,
    values: [
      row.eventId,
      row.type,
      row.occurredAt,
      row.tenantId,
      row.correlationId,
      row.causationId,
      row.taskId,
      row.sessionId,
      row.body,
      row.recordedAt,
      row.topic,
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

export interface EventFilter {
  correlationId?: string;
  taskId?: string;
  type?: string;
  afterSeq?: number;
  limit: number;
}

export function selectEvents(f: EventFilter): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    values.push(value);
    where.push(clause.replace('?', `$${values.length}`));
  };
  if (f.correlationId) add('correlation_id = ?', f.correlationId);
  if (f.taskId) add('task_id = ?', f.taskId);
  if (f.type)
    add(
      f.type.endsWith('.*') ? 'type LIKE ?' : 'type = ?',
      f.type.endsWith('.*') ? `${f.type.slice(0, -1)}%` : f.type,
    );
  if (f.afterSeq !== undefined) add('seq > ?', f.afterSeq);
  values.push(f.limit);
  return {
    text: `SELECT seq, body FROM events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq LIMIT $${values.length}`,
    values,
  };
}

export function selectChainPage(afterSeq: number, limit: number): Sql {
  return {
    text: 'SELECT seq, event_id, body, prev_hash, hash FROM events WHERE seq > $1 ORDER BY seq LIMIT $2',
    values: [afterSeq, limit],
  };
}

export function selectHead(): Sql {
  return { text: 'SELECT seq, hash FROM log_head WHERE id = 1' };
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
