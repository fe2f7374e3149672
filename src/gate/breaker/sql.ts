import type { Sql } from '../../store/port.js';

/** The breaker's statements (`breaker_hits`, migration 0110); the gate's own are in `../sql.ts`. */

/** No row back when this event was already counted for this scope (the relay delivers at least once). */
export function insertHit(h: {
  scope: string;
  value: string;
  eventId: string;
  kind: string;
  at: number;
}): Sql {
  return {
    text: `INSERT INTO breaker_hits (scope, value, event_id, kind, at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (scope, value, event_id) DO NOTHING RETURNING event_id`,
    values: [h.scope, h.value, h.eventId, h.kind, h.at],
  };
}

/** The scope's counts by kind inside the window `(since, …]`. */
export function countHits(scope: string, value: string, since: number): Sql {
  return {
    text: `SELECT kind, COUNT(*) AS n FROM breaker_hits WHERE scope = $1 AND value = $2 AND at > $3 GROUP BY kind`,
    values: [scope, value, since],
  };
}

/** A trip clears the scope: after the unfreeze it is judged on what happens from then on. */
export function deleteHits(scope: string, value: string): Sql {
  return { text: 'DELETE FROM breaker_hits WHERE scope = $1 AND value = $2', values: [scope, value] };
}

/** The scope's rows no window can still see. */
export function pruneHits(scope: string, value: string, before: number): Sql {
  return {
    text: 'DELETE FROM breaker_hits WHERE scope = $1 AND value = $2 AND at <= $3',
    values: [scope, value, before],
  };
}

/**
 * PostgreSQL: one scope is counted by one transaction at a time, so two events committing together both
 * see each other's row (under READ COMMITTED each would miss the other's, and a crossing could go unseen).
 * SQLite's BEGIN IMMEDIATE already serialises writers.
 */
export function lockScope(scope: string, value: string): Sql {
  return {
    text: 'SELECT pg_advisory_xact_lock(hashtext($1)) AS locked',
    values: [`breaker:${scope}:${value}`],
  };
}
