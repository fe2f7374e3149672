import type { Sql } from '../store/port.js';

/** Every statement of the console: its sessions table only (migration 0800). */

export interface SessionRow {
  id: string;
  principal: string;
  role: string;
  key_mac: string;
  csrf: string;
  created_at: number;
  expires_at: number;
}

export function insertSession(r: SessionRow): Sql {
  return {
    text: `INSERT INTO console_sessions (id, principal, role, key_mac, csrf, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    values: [r.id, r.principal, r.role, r.key_mac, r.csrf, r.created_at, r.expires_at],
  };
}

/** A session that has not expired; an expired row reads as absent before the sweep deletes it. */
export function selectSession(id: string, now: number): Sql {
  return {
    text: 'SELECT * FROM console_sessions WHERE id = $1 AND expires_at > $2',
    values: [id, now],
  };
}

export function deleteSession(id: string): Sql {
  return { text: 'DELETE FROM console_sessions WHERE id = $1 RETURNING id', values: [id] };
}

export function deleteExpiredSessions(now: number): Sql {
  return { text: 'DELETE FROM console_sessions WHERE expires_at <= $1 RETURNING id', values: [now] };
}
