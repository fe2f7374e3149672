import { describe, expect, it } from 'vitest';
import {
  type BucketState,
  type RateConfig,
  currentRate,
  initialBucket,
  take,
  throttle,
} from './ratelimit.js';

const cfg: RateConfig = { ratePerSec: 10, burst: 5, minRatePerSec: 1, recoveryMs: 30_000 };

function takeMany(s: BucketState, now: number, n: number): { state: BucketState; taken: number } {
  let state = s;
  let taken = 0;
  for (let i = 0; i < n; i++) {
    const t = take(state, now, cfg);
    state = t.state;
    if (t.kind === 'take') taken += 1;
  }
  return { state, taken };
}

describe('the token bucket', () => {
  it('lets a burst through and then makes the next one wait', () => {
    const { state, taken } = takeMany(initialBucket(0, cfg), 0, 8);
    expect(taken).toBe(5);
    expect(take(state, 0, cfg)).toMatchObject({ kind: 'wait', retryAt: 100 });
  });

  it('refills at the configured rate', () => {
    const { state } = takeMany(initialBucket(0, cfg), 0, 5);
    expect(takeMany(state, 300, 10).taken).toBe(3);
  });

  it('never holds more than the burst', () => {
    expect(takeMany(initialBucket(0, cfg), 3_600_000, 20).taken).toBe(5);
  });
});

describe('the throttle', () => {
  it('halves the rate, empties the bucket and pauses until Retry-After', () => {
    const s = throttle(initialBucket(0, cfg), 0, 2_000, cfg);
    expect(currentRate(s, 0, cfg)).toBe(5);
    expect(take(s, 1_000, cfg)).toMatchObject({ kind: 'wait', retryAt: 2_000 });
    expect(take(s, 2_000, cfg).kind).toBe('take');
  });

  it('halves again on each signal but not below the floor', () => {
    let s = initialBucket(0, cfg);
    for (let i = 0; i < 10; i++) s = throttle(s, 0, undefined, cfg);
    expect(currentRate(s, 0, cfg)).toBe(1);
  });

  it('doubles back every recovery period until the configured rate', () => {
    const s = throttle(throttle(initialBucket(0, cfg), 0, undefined, cfg), 0, undefined, cfg);
    expect(currentRate(s, 0, cfg)).toBe(2.5);
    expect(currentRate(s, 30_000, cfg)).toBe(5);
    expect(currentRate(s, 120_000, cfg)).toBe(10);
  });

  it('forgets the throttle once recovered', () => {
    const s = throttle(initialBucket(0, cfg), 0, undefined, cfg);
    const later = take(s, 60_000, cfg).state;
    expect(later).toMatchObject({ throttledRate: null, throttledAt: null });
  });

  it('does not shorten an existing pause', () => {
    const s = throttle(throttle(initialBucket(0, cfg), 0, 10_000, cfg), 100, 5_000, cfg);
    expect(s.pausedUntil).toBe(10_000);
  });
});
