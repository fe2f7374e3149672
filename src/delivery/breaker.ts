import type { Outcome } from './retry.js';

/**
 * A circuit breaker per endpoint as a pure state machine over a plain, JSON-serializable object, so
 * the store can persist it and every replica sees the same state. Time is an argument.
 *
 *   closed ──(failure ratio over the window)──> open ──(cool-down)──> half_open
 *   half_open ──(probe succeeds)──> closed        half_open ──(probe fails)──> open (longer cool-down)
 *   open, `disableAfterOpens` times in a row ──> disabled (until a person re-enables the endpoint)
 *
 * Pinned by `breaker.test.ts`.
 */

export interface BreakerConfig {
  /** Length of the counting window in closed state. */
  windowMs: number;
  /** Fewer attempts than this in a window never trip: two failures out of three is not a pattern. */
  minAttempts: number;
  /** Failure ratio (0..1) at or above which the breaker opens. */
  failureRatio: number;
  /** First cool-down; doubles with each consecutive open, up to `maxCoolDownMs`. */
  coolDownMs: number;
  maxCoolDownMs: number;
  /** A half-open probe that has not reported back after this long is presumed lost; another may go. */
  probeTimeoutMs: number;
  /** Consecutive opens (without a successful probe in between) that disable the endpoint. */
  disableAfterOpens: number;
}

export const DEFAULT_BREAKER: BreakerConfig = {
  windowMs: 60_000, // one minute of traffic is enough to tell an outage from a blip
  minAttempts: 10, // Convoy's MinimumRequestCount
  failureRatio: 0.5, // half the attempts failing is an outage, not noise
  coolDownMs: 30_000, // Convoy's BreakerTimeout
  maxCoolDownMs: 60 * 60_000, // an hour: a dead endpoint is still probed every hour
  probeTimeoutMs: 60_000, // longer than any attempt (15 s timeout) plus queueing
  disableAfterOpens: 10, // with doubling cool-downs, about 4.5 hours of uninterrupted failure
};

export type BreakerState =
  | { state: 'closed'; windowStart: number; attempts: number; failures: number; opens: number }
  | { state: 'open'; openedAt: number; until: number; opens: number }
  | { state: 'half_open'; probeAt: number | null; opens: number }
  | { state: 'disabled'; at: number; opens: number };

export type Admission =
  | { kind: 'admit'; state: BreakerState; probe: boolean }
  | { kind: 'reject'; state: BreakerState; reason: 'open' | 'probing' | 'disabled'; retryAt: number | null };

export function initialBreaker(now: number): BreakerState {
  return { state: 'closed', windowStart: now, attempts: 0, failures: 0, opens: 0 };
}

function coolDown(opens: number, cfg: BreakerConfig): number {
  return Math.min(cfg.coolDownMs * 2 ** Math.max(0, opens - 1), cfg.maxCoolDownMs);
}

function open(now: number, opens: number, cfg: BreakerConfig): BreakerState {
  if (opens >= cfg.disableAfterOpens) return { state: 'disabled', at: now, opens };
  return { state: 'open', openedAt: now, until: now + coolDown(opens, cfg), opens };
}

/** May an attempt go to this endpoint now? Moves open to half_open once the cool-down is over. */
export function admit(s: BreakerState, now: number, cfg: BreakerConfig = DEFAULT_BREAKER): Admission {
  switch (s.state) {
    case 'closed':
      return { kind: 'admit', state: s, probe: false };
    case 'disabled':
      return { kind: 'reject', state: s, reason: 'disabled', retryAt: null };
    case 'open':
      if (now < s.until) return { kind: 'reject', state: s, reason: 'open', retryAt: s.until };
      return { kind: 'admit', state: { state: 'half_open', probeAt: now, opens: s.opens }, probe: true };
    case 'half_open':
      if (s.probeAt !== null && now < s.probeAt + cfg.probeTimeoutMs) {
        return { kind: 'reject', state: s, reason: 'probing', retryAt: s.probeAt + cfg.probeTimeoutMs };
      }
      return { kind: 'admit', state: { ...s, probeAt: now }, probe: true };
  }
}

export type Signal = 'success' | 'failure';

/** Folds one attempt's result into the state. */
export function record(
  s: BreakerState,
  signal: Signal,
  now: number,
  cfg: BreakerConfig = DEFAULT_BREAKER,
): BreakerState {
  switch (s.state) {
    case 'disabled':
      return s;
    case 'open':
      // A straggler that started before the breaker opened; it does not change the verdict.
      return s;
    case 'half_open':
      if (signal === 'success') return initialBreaker(now);
      return open(now, s.opens + 1, cfg);
    case 'closed': {
      const fresh = now - s.windowStart >= cfg.windowMs;
      const attempts = (fresh ? 0 : s.attempts) + 1;
      const failures = (fresh ? 0 : s.failures) + (signal === 'failure' ? 1 : 0);
      const windowStart = fresh ? now : s.windowStart;
      if (attempts >= cfg.minAttempts && failures / attempts >= cfg.failureRatio)
        return open(now, s.opens + 1, cfg);
      return { state: 'closed', windowStart, attempts, failures, opens: s.opens };
    }
  }
}

/**
 * What an outcome says about the endpoint's health. A 4xx rejection means the endpoint is up and
 * answering (success); a 4xx worth retrying — 429, or what a channel reads as transient, like
 * Feishu's frequency limit 230020 or a stale token sent with HTTP 400 — is up too but no success
 * (429 lowers the rate limit instead); a blocked URL never reached it.
 */
export function breakerSignal(outcome: Outcome): Signal | undefined {
  switch (outcome.kind) {
    case 'ok':
      return 'success';
    case 'unknown':
      return 'failure';
    case 'retry':
      return outcome.status !== undefined && outcome.status >= 400 && outcome.status < 500
        ? undefined
        : 'failure';
    case 'dead':
      if (outcome.status === undefined) return outcome.reason.startsWith('blocked') ? undefined : 'failure';
      return outcome.status >= 500 ? 'failure' : 'success';
  }
}

/** A person re-enables an endpoint (or the config changed its URL): start clean. */
export function resetBreaker(now: number): BreakerState {
  return initialBreaker(now);
}
