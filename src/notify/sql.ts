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

export function saveState(scope: string, state: string, dueAt: number | null, now: number) {
  return {
    text: 'UPDATE notify_state SET state = $2, digest_due_at = $3, updated_at = $4 WHERE scope = $1',
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
