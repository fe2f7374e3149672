import { describe, expect, it } from 'vitest';
import type { Egress } from '../../egress/index.js';
import type { EventLog } from '../../log/log.js';
import type { DeliveryPolicies } from '../config.js';
import { DeliveryEngine } from './engine.js';
import { countingDb, settle } from './testing.js';

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
