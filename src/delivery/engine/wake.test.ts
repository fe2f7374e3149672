import { describe, expect, it } from 'vitest';
import type { Egress } from '../../egress/index.js';
import type { EventLog } from '../../log/log.js';
import type { Db, Sql } from '../../store/port.js';
import type { DeliveryPolicies } from '../config.js';
import { DeliveryEngine } from './engine.js';

/** A store with nothing due that counts claim passes (one pass claims each lane: two statements). */
function countingDb(): { db: Db; passes: () => number } {
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

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

describe('waking the delivery loops', () => {
  it('starts one idle loop per wake, and keeps a wake that finds every loop busy', async () => {
    const { db, passes } = countingDb();
    const engine = new DeliveryEngine({
      db,
      log: {} as EventLog,
      channels: () => ({}),
      policies: { timeoutMs: 10_000 } as DeliveryPolicies,
      egress: {} as Egress,
      secret: () => undefined,
      now: () => 1_800_000_000_000,
      loops: 4,
      pollMs: 3_600_000, // no poll during the test: only wakes run passes
    });
    engine.start();
    await settle();
    expect(passes()).toBe(4); // each loop's first pass

    engine.wake();
    await settle();
    expect(passes()).toBe(5); // one loop, not four

    for (let i = 0; i < 6; i++) engine.wake();
    await settle();
    // Four idle loops start; the two wakes that found none idle leave one more pass behind them.
    expect(passes()).toBe(10);
    await engine.stop();
  });
});
