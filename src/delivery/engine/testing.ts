import type { Db, Sql } from '../../store/port.js';

/** Test helpers for the engine's wake suites. */

/** A store with nothing due that counts claim passes (one pass claims each lane: two statements). */
export function countingDb(): { db: Db; passes: () => number } {
  let claims = 0;
  const db: Db = {
    dialect: 'sqlite',
    inTransaction: false,
    async query<T>(q: Sql): Promise<T[]> {
      if (q.text.startsWith("UPDATE deliveries SET status = 'claimed'")) claims += 1;
      return [];
    },
    tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
      return fn(db);
    },
    afterCommit(fn: () => void): void {
      fn();
    },
    async close(): Promise<void> {},
  };
  return { db, passes: () => claims / 2 };
}

export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
