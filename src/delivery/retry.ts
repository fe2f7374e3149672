import type { SendResult } from '../egress/index.js';

/**
 * Retry policy as data, and the classification of one attempt into a closed outcome. Pure: time and
 * randomness come in as arguments. The tables in docs/delivery.md are pinned by `retry.test.ts`.
 */

export type Outcome =
  | { kind: 'ok'; status?: number }
  | {
      kind: 'retry';
      at: number;
      error: string;
      status?: number;
      /** The endpoint asked us to slow down (429/502/504): lower its rate, not just this delivery's. */
      throttle?: boolean;
      /** When the receiver's `Retry-After` (clamped) ends: pause the whole endpoint until then. */
      retryAfter?: number;
    }
  | { kind: 'dead'; reason: string; status?: number; disable?: boolean }
  /**
   * The request went out and no answer came back: the receiver may have acted. `at` is when a
   * retry would be due, for destinations that de-duplicate (signed webhooks carry `webhook-id`);
   * the others go to reconciliation. No `at` when the schedule is used up.
   */
  | { kind: 'unknown'; error: string; at?: number };

export interface RetryPolicy {
  /** Delay before each attempt, in ms; entry 0 is the first attempt. Its length is the attempt limit. */
  scheduleMs: readonly number[];
  /** Fraction each delay may move either way, so endpoints that failed together do not retry together. */
  jitter: number;
  /** A `Retry-After` shorter than this is raised to it. */
  retryAfterMinMs: number;
  /** A `Retry-After` longer than this is cut to it: a receiver cannot park a delivery forever. */
  retryAfterMaxMs: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Svix's hosted schedule: 8 attempts over about 27.5 hours, enough to ride out a long outage. */
export const DEFAULT_SCHEDULE_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  scheduleMs: DEFAULT_SCHEDULE_MS,
  jitter: 0.2, // Svix's JITTER_DELTA
  retryAfterMinMs: 1 * SECOND, // "Retry-After: 0" must not turn into a hot loop
  retryAfterMaxMs: 10 * HOUR, // the longest step of the default schedule
};

/** Statuses that mean "slow down": the endpoint's rate limit is lowered, not just this delivery delayed. */
const THROTTLE_STATUSES = new Set([429, 502, 504]);
/** 4xx that are worth another try: the receiver timed out reading us, or asks to try later. */
const TRANSIENT_4XX = new Set([408, 425, 429]);
/** Redirects we will never follow; retrying will not make them go away. */
const PERMANENT_REDIRECTS = new Set([301, 308]);

/** Milliseconds to wait from a `Retry-After` value (delta-seconds or an HTTP date); undefined if absent or bad. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * SECOND;
  const date = Date.parse(v);
  if (Number.isNaN(date) || !/[a-z]/i.test(v)) return undefined;
  return Math.max(0, date - now);
}

export function clampRetryAfter(retryAfterMs: number, policy: RetryPolicy): number {
  return Math.min(Math.max(retryAfterMs, policy.retryAfterMinMs), policy.retryAfterMaxMs);
}

/** `delay` moved by up to ±`jitter`; `random` returns [0, 1). */
export function withJitter(delayMs: number, jitter: number, random: () => number): number {
  return Math.round(delayMs * (1 + jitter * (2 * random() - 1)));
}

/** When a new delivery's first attempt is due (entry 0 of the schedule, "immediately" by default). */
export function firstAttemptAt(policy: RetryPolicy, now: number): number {
  return now + (policy.scheduleMs[0] ?? 0);
}

/**
 * When attempt `attempt + 1` is due after attempt `attempt` (1-based) failed at `now`, or undefined
 * when the schedule is used up. A `Retry-After` can only push the attempt later, never earlier.
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempt: number,
  now: number,
  random: () => number,
  retryAfterMs?: number,
): number | undefined {
  const base = policy.scheduleMs[attempt];
  if (base === undefined) return undefined;
  let delay = withJitter(base, policy.jitter, random);
  if (retryAfterMs !== undefined) delay = Math.max(delay, clampRetryAfter(retryAfterMs, policy));
  return now + delay;
}

/**
 * A channel's verdict on one answer: the shape of the channels' `SendResult` (src/channels), which
 * this pure module does not import.
 */
export type Verdict =
  | { kind: 'ok' }
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  | { kind: 'dead'; reason: string };

export interface ClassifyContext {
  /** The attempt that produced `result`, 1-based. */
  attempt: number;
  now: number;
  policy?: RetryPolicy;
  random?: () => number;
  /**
   * The channel's reading of an answer of any status; this is the hook the channels plug into.
   * `retry` or `dead` wins over the status rules: a chat API's 200 with `{"ok":false}`, Feishu's
   * frequency limit sent as HTTP 400, Telegram's `retry_after` in a 429's body. `ok` or undefined
   * leaves the status to decide (a channel cannot turn a non-2xx into a delivery).
   */
  inspect?: (result: SendResult & { status: number }) => Verdict | undefined;
}

/** Classifies one attempt. See the table in docs/delivery.md. */
export function classify(result: SendResult, ctx: ClassifyContext): Outcome {
  const policy = ctx.policy ?? DEFAULT_RETRY_POLICY;
  const random = ctx.random ?? Math.random;
  const status = result.status;

  const retry = (error: string, extra: { throttle?: boolean; retryAfterMs?: number } = {}): Outcome => {
    const at = nextAttemptAt(policy, ctx.attempt, ctx.now, random, extra.retryAfterMs);
    if (at === undefined) {
      return {
        kind: 'dead',
        reason: `exhausted after ${ctx.attempt} attempts: ${error}`,
        ...(status ? { status } : {}),
      };
    }
    const out: Outcome = { kind: 'retry', at, error };
    if (status !== undefined) out.status = status;
    if (extra.throttle) out.throttle = true;
    if (extra.retryAfterMs !== undefined)
      out.retryAfter = ctx.now + clampRetryAfter(extra.retryAfterMs, policy);
    return out;
  };

  if (status === undefined) {
    const error = result.error ?? 'other';
    if (error === 'blocked')
      return { kind: 'dead', reason: `blocked: ${result.blocked?.reason ?? 'egress policy'}` };
    if (result.sent) {
      const at = nextAttemptAt(policy, ctx.attempt, ctx.now, random);
      return at === undefined ? { kind: 'unknown', error } : { kind: 'unknown', error, at };
    }
    return retry(error);
  }

  const retryAfterMs = parseRetryAfter(result.headers?.['retry-after'], ctx.now);
  const verdict = ctx.inspect?.({ ...result, status });
  if (verdict?.kind === 'dead') {
    // 410 still disables the endpoint, whoever reads the body.
    return { kind: 'dead', reason: verdict.reason, status, ...(status === 410 ? { disable: true } : {}) };
  }
  if (verdict?.kind === 'retry') {
    // The channel's hint (Feishu's reset header, Telegram's and Discord's body) or else `Retry-After`;
    // either is clamped. A hint says "slow down", so the endpoint is throttled and paused too.
    const after = verdict.retryAfterMs ?? retryAfterMs;
    return retry(verdict.error, {
      throttle: THROTTLE_STATUSES.has(status) || verdict.retryAfterMs !== undefined,
      ...(after !== undefined ? { retryAfterMs: after } : {}),
    });
  }
  if (status >= 200 && status < 300) return { kind: 'ok', status };
  if (status === 410)
    return { kind: 'dead', reason: 'gone: the endpoint asked to be removed', status, disable: true };
  if (status >= 300 && status < 400) {
    if (PERMANENT_REDIRECTS.has(status))
      return { kind: 'dead', reason: `redirect ${status} not followed`, status };
    return retry(`redirect ${status} not followed`);
  }
  if (status >= 400 && status < 500 && !TRANSIENT_4XX.has(status)) {
    return { kind: 'dead', reason: `rejected with ${status}`, status };
  }
  return retry(`status ${status}`, {
    throttle: THROTTLE_STATUSES.has(status),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}
