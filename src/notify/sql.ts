import type { Dialect } from '../store/port.js';

/** All SQL of the notify module, as `{ text, values }` for the one-method DB port. */

export interface StateRow {
  scope: string;
  state: string;
  digest_due_at: number | null;
}

export function ensureState(scope: string, now: number) {
  return {
    text: `INSERT INTO notify_state (scope, state, digest_due_at, updated_at) VALUES ($1, $2, NULL, $3)
           ON CONFLICT (scope) DO NOTHING`,
    values: [scope, '{"sent":[],"done_sent":false}', now],
  };
}

/** Inside the caller's transaction: PostgreSQL locks the row; SQLite's BEGIN IMMEDIATE already holds the writer lock. */
export function lockState(dialect: Dialect, scope: string) {
  return {
    text: `SELECT scope, state, digest_due_at FROM notify_state WHERE scope = $1${dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
    values: [scope],
  };
}

/** An upsert: on SQLite `lockState` reads without creating the row first (one statement fewer). */
export function saveState(scope: string, state: string, dueAt: number | null, now: number) {
  return {
    text: `INSERT INTO notify_state (scope, state, digest_due_at, updated_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (scope) DO UPDATE SET state = $2, digest_due_at = $3, updated_at = $4`,
    values: [scope, state, dueAt, now],
  };
}

export function dueScopes(now: number, limit: number) {
  return {
    text: `SELECT scope FROM notify_state WHERE digest_due_at IS NOT NULL AND digest_due_at <= $1
           ORDER BY digest_due_at LIMIT $2`,
    values: [now, limit],
  };
}

export interface FallbackRow {
  delivery_id: string;
  sent_event_id: string;
  destination: string;
  fallback: string;
  after_failures: number;
  lane: string;
  message: string;
  fired_at: number | null;
}

export function insertFallback(r: Omit<FallbackRow, 'fired_at'>, now: number) {
  return {
    text: `INSERT INTO notify_fallbacks (delivery_id, sent_event_id, destination, fallback, after_failures, lane, message, fired_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8) ON CONFLICT (delivery_id) DO NOTHING`,
    values: [
      r.delivery_id,
      r.sent_event_id,
      r.destination,
      r.fallback,
      r.after_failures,
      r.lane,
      r.message,
      now,
    ],
  };
}

/** Claims the fallback once: only the first caller gets the row back. */
export function fireFallback(deliveryId: string, now: number) {
  return {
    text: `UPDATE notify_fallbacks SET fired_at = $2 WHERE delivery_id = $1 AND fired_at IS NULL
           RETURNING delivery_id, sent_event_id, destination, fallback, after_failures, lane, message, fired_at`,
    values: [deliveryId, now],
  };
}

export function getFallback(deliveryId: string) {
  return {
    text: 'SELECT after_failures, fired_at FROM notify_fallbacks WHERE delivery_id = $1',
    values: [deliveryId],
  };
}

/**
 * Approvals already re-announced that have not expired yet: the ones a poll must skip. A reminder row
 * keeps its approval's `expires_at`, so this stays as small as the reminder window.
 */
export function remindedApprovals(now: number) {
  return {
    text: 'SELECT approval_id FROM notify_reminders WHERE expires_at > $1',
    values: [now],
  };
}

/** Claims the reminder of one approval: only the first caller (of any replica) gets a row back. */
export function claimReminder(approvalId: string, expiresAt: number, now: number) {
  return {
    text: `INSERT INTO notify_reminders (approval_id, sent_event_id, expires_at, created_at)
           VALUES ($1, NULL, $2, $3) ON CONFLICT (approval_id) DO NOTHING RETURNING approval_id`,
    values: [approvalId, expiresAt, now],
  };
}

export function reminderSent(approvalId: string, eventId: string | null) {
  return {
    text: 'UPDATE notify_reminders SET sent_event_id = $2 WHERE approval_id = $1',
    values: [approvalId, eventId],
  };
}
