import { describe, expect, it } from 'vitest';
import type { Egress } from '../../egress/index.js';
import type { EventLog } from '../../log/log.js';
import type { Db } from '../../store/port.js';
import type { DeliveryPolicies } from '../config.js';
import { DeliveryEngine } from './engine.js';
import { countingDb, settle } from './testing.js';

describe('waking the delivery loops for enqueued rows', () => {
  function engineOn(db: Db) {
    return new DeliveryEngine({
      db,
      log: {} as EventLog,
      channels: () => ({}),
      policies: { timeoutMs: 10_000 } as DeliveryPolicies,
      egress: {} as Egress,
      secret: () => undefined,
      now: () => 1_800_000_000_000,
      loops: 4,
      batchSize: 64,
      pollMs: 3_600_000, // no poll during the test: only wakes run passes
    });
  }

  it('wakes one loop for the rows of one group commit, not one loop per row', async () => {
    const { db, passes } = countingDb();
    const engine = engineOn(db);
    engine.start();
    await settle();
    expect(passes()).toBe(4); // each loop's first pass
    // Eight reports committed together: their after-commit hooks run in one turn.
    for (let i = 0; i < 8; i++) engine.rowDue();
    await settle();
    expect(passes()).toBe(5);
    await engine.stop();
  });

  it('wakes a loop per batch of rows when one turn enqueues more than a batch, up to every loop', async () => {
    const { db, passes } = countingDb();
    const engine = engineOn(db);
    engine.start();
    await settle();
    for (let i = 0; i < 130; i++) engine.rowDue(); // three batches of 64
    await settle();
    expect(passes()).toBe(4 + 3);
    for (let i = 0; i < 1000; i++) engine.rowDue();
    await settle();
    expect(passes()).toBe(7 + 4);
    // The next turn counts afresh.
    engine.rowDue();
    await settle();
    expect(passes()).toBe(12);
    await engine.stop();
  });
});
