import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER } from './breaker.js';
import { deliveryConfigSchema, deliveryPolicies } from './config.js';
import { DEFAULT_RATE } from './ratelimit.js';
import { DEFAULT_RETRY_POLICY } from './retry.js';

describe('the delivery config section', () => {
  it('defaults to the named constants when empty', () => {
    const p = deliveryPolicies(deliveryConfigSchema.parse({}));
    expect(p.retry).toEqual({ ...DEFAULT_RETRY_POLICY, scheduleMs: [...DEFAULT_RETRY_POLICY.scheduleMs] });
    expect(p.breaker).toEqual(DEFAULT_BREAKER);
    expect(p.rate).toEqual(DEFAULT_RATE);
    expect(p).toMatchObject({ timeoutMs: 15_000, maxResponseBytes: 65_536 });
  });

  it('takes a custom schedule and a partial breaker section', () => {
    const p = deliveryPolicies(
      deliveryConfigSchema.parse({ retry_schedule_ms: [0, 1000, 60000], breaker: { min_attempts: 20 } }),
    );
    expect(p.retry.scheduleMs).toEqual([0, 1000, 60000]);
    expect(p.breaker).toEqual({ ...DEFAULT_BREAKER, minAttempts: 20 });
  });

  it('rejects unknown keys and nonsense values with their path', () => {
    const r = deliveryConfigSchema.safeParse({
      retry_schedul_ms: [1],
      jitter: 2,
      breaker: { failure_ratio: 0 },
    });
    expect(r.success).toBe(false);
    const paths = r.error?.issues.map((i) => i.path.join('.')) ?? [];
    expect(paths).toEqual(expect.arrayContaining(['jitter', 'breaker.failure_ratio']));
    expect(r.error?.issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
  });
});
