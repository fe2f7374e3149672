import type { Db } from '../store/port.js';
import { insertInbox, selectInbox } from './sql.js';

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
  const rows = await db.query(insertInbox(consumer, eventId, now));
  return rows.length > 0;
}

export async function wasProcessed(db: Db, consumer: string, eventId: string): Promise<boolean> {
  const rows = await db.query(selectInbox(consumer, eventId));
  return rows.length > 0;
}
