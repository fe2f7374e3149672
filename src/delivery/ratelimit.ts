/**
 * A per-endpoint token bucket as pure, JSON-serializable state (persisted beside the breaker), with
 * a throttle: when the endpoint answers 429/502/504 the rate is halved and the bucket pauses until
 * its `Retry-After`; the rate then doubles back every `recoveryMs` (multiplicative decrease,
 * multiplicative recovery, so a struggling receiver is not hit with the full rate at once).
 * Time is an argument. Pinned by `ratelimit.test.ts`.
 */

export interface RateConfig {
  /** Sustained deliveries per second (Svix's endpoint `throttleRate`). */
  ratePerSec: number;
  /** Bucket size: how many may go at once after a quiet spell. */
  burst: number;
  /** The throttle never lowers the rate below this. */
  minRatePerSec: number;
  /** After a throttle, the rate doubles every this many ms until it is back at `ratePerSec`. */
  recoveryMs: number;
}

export const DEFAULT_RATE: RateConfig = {
  // High enough that only an explicit setting or a throttle signal slows an endpoint: the bench
  // sends over 3,000 deliveries/s to one local receiver.
  ratePerSec: 10_000,
  burst: 10_000,
  minRatePerSec: 1, // a throttled endpoint still gets one delivery per second to prove it recovered
  recoveryMs: 30_000,
};

export interface BucketState {
  tokens: number;
  updatedAt: number;
  /** Rate at the last throttle, or null when not throttled. */
  throttledRate: number | null;
  throttledAt: number | null;
  /** No delivery before this (a `Retry-After`), or null. */
  pausedUntil: number | null;
}

export type Take =
  | { kind: 'take'; state: BucketState }
  | { kind: 'wait'; state: BucketState; retryAt: number };

export function initialBucket(now: number, cfg: RateConfig = DEFAULT_RATE): BucketState {
  return { tokens: cfg.burst, updatedAt: now, throttledRate: null, throttledAt: null, pausedUntil: null };
}

/** The rate in force at `now`: the configured one, or a throttled one on its way back up. */
export function currentRate(s: BucketState, now: number, cfg: RateConfig = DEFAULT_RATE): number {
  if (s.throttledRate === null || s.throttledAt === null) return cfg.ratePerSec;
  const recovered = s.throttledRate * 2 ** (Math.max(0, now - s.throttledAt) / cfg.recoveryMs);
  return Math.min(cfg.ratePerSec, recovered);
}

function refill(s: BucketState, now: number, cfg: RateConfig): BucketState {
  const elapsed = Math.max(0, now - s.updatedAt) / 1000;
  const rate = currentRate(s, now, cfg);
  const recovered = rate >= cfg.ratePerSec;
  return {
    tokens: Math.min(cfg.burst, s.tokens + elapsed * rate),
    updatedAt: Math.max(now, s.updatedAt),
    throttledRate: recovered ? null : s.throttledRate,
    throttledAt: recovered ? null : s.throttledAt,
    pausedUntil: s.pausedUntil !== null && now >= s.pausedUntil ? null : s.pausedUntil,
  };
}

/** Takes one token for one attempt, or says when to come back. */
export function take(s: BucketState, now: number, cfg: RateConfig = DEFAULT_RATE): Take {
  const r = refill(s, now, cfg);
  if (r.pausedUntil !== null) return { kind: 'wait', state: r, retryAt: r.pausedUntil };
  if (r.tokens >= 1) return { kind: 'take', state: { ...r, tokens: r.tokens - 1 } };
  const rate = currentRate(r, now, cfg);
  return { kind: 'wait', state: r, retryAt: now + Math.ceil(((1 - r.tokens) / rate) * 1000) };
}

/**
 * The endpoint said "slow down": halve the rate in force, empty the bucket (no burst into a
 * struggling receiver) and pause until `until` (from `Retry-After`) when given.
 */
export function throttle(
  s: BucketState,
  now: number,
  until: number | undefined,
  cfg: RateConfig = DEFAULT_RATE,
): BucketState {
  const r = refill(s, now, cfg);
  const rate = Math.max(cfg.minRatePerSec, currentRate(r, now, cfg) / 2);
  const pause = until !== undefined && until > now ? Math.max(until, r.pausedUntil ?? 0) : r.pausedUntil;
  return { tokens: 0, updatedAt: now, throttledRate: rate, throttledAt: now, pausedUntil: pause };
}
