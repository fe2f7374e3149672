import type { Db } from '../store/port.js';

/**
 * Consumer de-duplication. `once` records (consumer, event id) and runs `fn` in the same transaction,
 * so a database-only effect happens exactly once however often the event is redelivered. For effects
 * outside the database, `markProcessed` after the effect gives at-least-once with de-duplication on
 * the common path; the effect itself must carry the event id as its idempotency key.
 */
export async function once<T>(
  db: Db,
  consumer: string,
  eventId: string,
  fn: (tx: Db) => Promise<T>,
  now = Date.now(),
): Promise<{ ran: true; value: T } | { ran: false }> {
  return db.tx(async (tx) => {
    const inserted = await markProcessed(tx, consumer, eventId, now);
    if (!inserted) return { ran: false };
    return { ran: true, value: await fn(tx) };
  });
}

export async function markProcessed(
  db: Db,
  consumer: string,
  eventId: string,
  now = Date.now(),
): Promise<boolean> {
  const rows = await db.query({
    text: `INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, $3)
           ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
    values: [consumer, eventId, now],
  });
  return rows.length > 0;
}

export async function wasProcessed(db: Db, consumer: string, eventId: string): Promise<boolean> {
  const rows = await db.query({
    text: 'SELECT 1 AS x FROM inbox WHERE consumer = $1 AND event_id = $2',
    values: [consumer, eventId],
  });
  return rows.length > 0;
}
