import { describe, expect, it } from 'vitest';
import type { SendResult } from '../egress/index.js';
import {
  DEFAULT_RETRY_POLICY,
  DEFAULT_SCHEDULE_MS,
  type Outcome,
  classify,
  nextAttemptAt,
  parseRetryAfter,
  withJitter,
} from './retry.js';

const mid = () => 0.5; // no jitter
const answered = (status: number, headers: Record<string, string> = {}): SendResult => ({
  sent: true,
  status,
  headers,
  body: '',
  durationMs: 1,
});
const failed = (error: SendResult['error'], sent: boolean): SendResult => ({ sent, error, durationMs: 1 });

describe('the default schedule', () => {
  it('is Svix’s: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    const s = 1000;
    expect(DEFAULT_SCHEDULE_MS).toEqual([
      0,
      5 * s,
      300 * s,
      1800 * s,
      7200 * s,
      18000 * s,
      36000 * s,
      36000 * s,
    ]);
  });

  it('gives the delay for each next attempt and nothing after the eighth', () => {
    const at = (attempt: number) => nextAttemptAt(DEFAULT_RETRY_POLICY, attempt, 0, mid);
    expect(at(1)).toBe(5_000);
    expect(at(2)).toBe(300_000);
    expect(at(7)).toBe(36_000_000);
    expect(at(8)).toBeUndefined();
  });

  it('moves each delay by at most 20 % either way', () => {
    expect(withJitter(300_000, 0.2, () => 0)).toBe(240_000);
    expect(withJitter(300_000, 0.2, () => 0.999999)).toBe(360_000);
    for (let i = 0; i < 200; i++) {
      const d = withJitter(300_000, 0.2, Math.random);
      expect(d).toBeGreaterThanOrEqual(240_000);
      expect(d).toBeLessThanOrEqual(360_000);
    }
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');

  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores values that are neither', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });

  it('pushes an attempt later but never earlier than the schedule', () => {
    expect(nextAttemptAt(DEFAULT_RETRY_POLICY, 1, 0, mid, 60_000)).toBe(60_000);
    expect(nextAttemptAt(DEFAULT_RETRY_POLICY, 3, 0, mid, 60_000)).toBe(1_800_000);
  });

  it('is clamped: 0 becomes a second, a week becomes ten hours', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, scheduleMs: [0, 0, 0] };
    expect(nextAttemptAt(policy, 1, 0, mid, 0)).toBe(1_000);
    expect(nextAttemptAt(policy, 1, 0, mid, 7 * 24 * 3_600_000)).toBe(36_000_000);
  });
});

type Row = [name: string, result: SendResult, expected: Partial<Outcome>];

const table: Row[] = [
  ['200 is ok', answered(200), { kind: 'ok' }],
  ['204 is ok', answered(204), { kind: 'ok' }],
  ['429 retries and throttles', answered(429), { kind: 'retry', throttle: true, at: 5_000 }],
  ['502 retries and throttles', answered(502), { kind: 'retry', throttle: true }],
  ['504 retries and throttles', answered(504), { kind: 'retry', throttle: true }],
  ['503 retries without throttling', answered(503), { kind: 'retry', error: 'status 503' }],
  ['500 retries', answered(500), { kind: 'retry', error: 'status 500' }],
  ['410 is dead and disables the endpoint', answered(410), { kind: 'dead', disable: true, status: 410 }],
  ['400 is permanent', answered(400), { kind: 'dead', reason: 'rejected with 400' }],
  ['401 is permanent', answered(401), { kind: 'dead', status: 401 }],
  ['404 is permanent', answered(404), { kind: 'dead', status: 404 }],
  ['413 is permanent', answered(413), { kind: 'dead', status: 413 }],
  ['408 is retried (the receiver timed out reading)', answered(408), { kind: 'retry' }],
  ['301 is dead: a permanent redirect is never followed', answered(301), { kind: 'dead', status: 301 }],
  ['302 is retried, never followed', answered(302), { kind: 'retry', error: 'redirect 302 not followed' }],
  ['a refused connection is retried', failed('refused', false), { kind: 'retry', error: 'refused' }],
  ['a DNS failure is retried', failed('dns', false), { kind: 'retry', error: 'dns' }],
  ['a timeout before sending is retried', failed('timeout', false), { kind: 'retry', error: 'timeout' }],
  [
    'a timeout after sending is unknown',
    failed('timeout', true),
    { kind: 'unknown', error: 'timeout', at: 5_000 },
  ],
  ['a reset after sending is unknown', failed('reset', true), { kind: 'unknown', error: 'reset' }],
  [
    'a blocked URL is dead with its reason',
    { sent: false, error: 'blocked', blocked: { reason: 'metadata', detail: 'x' }, durationMs: 0 },
    { kind: 'dead', reason: 'blocked: metadata' },
  ],
];

describe('classify', () => {
  it.each(table)('%s', (_name, result, expected) => {
    expect(classify(result, { attempt: 1, now: 0, random: mid })).toMatchObject(expected);
  });

  it('honours Retry-After on a 429 and says until when the endpoint should pause', () => {
    const outcome = classify(answered(429, { 'retry-after': '30' }), { attempt: 1, now: 1_000, random: mid });
    expect(outcome).toEqual({
      kind: 'retry',
      at: 31_000,
      error: 'status 429',
      status: 429,
      throttle: true,
      retryAfter: 31_000,
    });
  });

  it('turns a retry into dead once the schedule is used up', () => {
    const outcome = classify(answered(503), { attempt: 8, now: 0, random: mid });
    expect(outcome).toEqual({ kind: 'dead', reason: 'exhausted after 8 attempts: status 503', status: 503 });
  });

  it('keeps an unknown unknown when the schedule is used up, with no retry time', () => {
    expect(classify(failed('reset', true), { attempt: 8, now: 0 })).toEqual({
      kind: 'unknown',
      error: 'reset',
    });
  });

  it('lets a channel read a 200 body as a failure', () => {
    const result = { ...answered(200), body: '{"ok":false,"error":"channel_not_found"}' };
    const outcome = classify(result, {
      attempt: 1,
      now: 0,
      inspect: (r) =>
        r.body?.includes('"ok":false') ? { kind: 'dead', reason: 'channel_not_found' } : undefined,
    });
    expect(outcome).toEqual({ kind: 'dead', reason: 'channel_not_found', status: 200 });
  });

  describe('with a channel that reads answers of any status', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, jitter: 0 };
    const at = (status: number, headers: Record<string, string> = {}) => ({
      ...answered(status, headers),
      body: 'x',
    });

    it('retries a 400 the channel calls a rate limit, and throttles and pauses the endpoint by its hint', () => {
      const outcome = classify(at(400), {
        attempt: 1,
        now: 1_000,
        policy,
        inspect: () => ({ kind: 'retry', error: 'feishu code 230020', retryAfterMs: 20_000 }),
      });
      expect(outcome).toEqual({
        kind: 'retry',
        at: 21_000,
        error: 'feishu code 230020',
        status: 400,
        throttle: true,
        retryAfter: 21_000,
      });
    });

    it('retries a 400 the channel calls transient on the schedule, without a pause', () => {
      const outcome = classify(at(400), {
        attempt: 1,
        now: 0,
        policy,
        inspect: () => ({ kind: 'retry', error: 'feishu code 99991663' }),
      });
      expect(outcome).toEqual({ kind: 'retry', at: 5_000, error: 'feishu code 99991663', status: 400 });
    });

    it('kills a 503 the channel calls permanent', () => {
      const outcome = classify(at(503), {
        attempt: 1,
        now: 0,
        inspect: () => ({ kind: 'dead', reason: 'feishu code 230002' }),
      });
      expect(outcome).toEqual({ kind: 'dead', reason: 'feishu code 230002', status: 503 });
    });

    it('clamps a channel hint like Retry-After', () => {
      const big = classify(at(429), {
        attempt: 1,
        now: 0,
        policy,
        inspect: () => ({ kind: 'retry', error: 'e', retryAfterMs: 7 * 24 * 3_600_000 }),
      });
      expect(big).toMatchObject({ at: policy.retryAfterMaxMs, retryAfter: policy.retryAfterMaxMs });
      const zero = classify(at(429), {
        attempt: 1,
        now: 0,
        policy: { ...policy, scheduleMs: [0, 0] },
        inspect: () => ({ kind: 'retry', error: 'e', retryAfterMs: 0 }),
      });
      expect(zero).toMatchObject({ at: policy.retryAfterMinMs });
    });

    it('uses Retry-After when the channel says retry without a hint, and throttles on 429', () => {
      const outcome = classify(at(429, { 'retry-after': '30' }), {
        attempt: 1,
        now: 0,
        policy,
        inspect: () => ({ kind: 'retry', error: 'telegram 429' }),
      });
      expect(outcome).toEqual({
        kind: 'retry',
        at: 30_000,
        error: 'telegram 429',
        status: 429,
        throttle: true,
        retryAfter: 30_000,
      });
    });

    it('leaves the status rules in force when the channel has no opinion or calls a non-2xx ok', () => {
      for (const inspect of [() => undefined, () => ({ kind: 'ok' as const })]) {
        expect(classify(at(400), { attempt: 1, now: 0, inspect })).toEqual({
          kind: 'dead',
          reason: 'rejected with 400',
          status: 400,
        });
        expect(classify(at(503), { attempt: 1, now: 0, policy, inspect })).toMatchObject({
          kind: 'retry',
          error: 'status 503',
        });
      }
    });

    it('still disables the endpoint on a 410 the channel calls dead', () => {
      const outcome = classify(at(410), {
        attempt: 1,
        now: 0,
        inspect: () => ({ kind: 'dead', reason: 'slack: channel_is_archived' }),
      });
      expect(outcome).toEqual({
        kind: 'dead',
        reason: 'slack: channel_is_archived',
        status: 410,
        disable: true,
      });
    });

    it('turns a channel retry into dead once the schedule is used up', () => {
      const outcome = classify(at(400), {
        attempt: 8,
        now: 0,
        inspect: () => ({ kind: 'retry', error: 'feishu code 230020' }),
      });
      expect(outcome).toEqual({
        kind: 'dead',
        reason: 'exhausted after 8 attempts: feishu code 230020',
        status: 400,
      });
    });
  });

  it('follows a custom schedule from config', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, scheduleMs: [0, 10_000], jitter: 0 };
    expect(classify(answered(500), { attempt: 1, now: 0, policy })).toMatchObject({
      kind: 'retry',
      at: 10_000,
    });
    expect(classify(answered(500), { attempt: 2, now: 0, policy })).toMatchObject({ kind: 'dead' });
  });
});
