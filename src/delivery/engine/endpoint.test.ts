import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER } from '../breaker.js';
import { DEFAULT_RATE } from '../ratelimit.js';
import { admitGroup, breakerLevel, initialEndpoint, PROBE_RECHECK_MS, recordGroup } from './endpoint.js';

const P = {
  breaker: { ...DEFAULT_BREAKER, minAttempts: 2, coolDownMs: 10_000 },
  rate: { ...DEFAULT_RATE, burst: 3, ratePerSec: 1 },
};
const T = 1_000_000;

describe('endpoint admission and recording', () => {
  it('admits up to the bucket and defers the rest until a token refills', () => {
    const { verdicts } = admitGroup(initialEndpoint(T, P), 5, T, P);
    expect(verdicts.map((v) => v.kind)).toEqual(['send', 'send', 'send', 'defer', 'defer']);
    expect(verdicts[3]).toEqual({ kind: 'defer', at: T + 1000, why: 'rate limited' });
  });

  it('opens on failures, defers while open, then lets exactly one probe through', () => {
    const failed = recordGroup(
      initialEndpoint(T, P),
      [
        { kind: 'retry', at: T, error: 'status 500', status: 500 },
        { kind: 'retry', at: T, error: 'status 500', status: 500 },
      ],
      T,
      P,
    ).state;
    expect(failed.breaker.state).toBe('open');
    expect(breakerLevel(failed)).toBe(2);
    expect(admitGroup(failed, 1, T + 1, P).verdicts).toEqual([
      { kind: 'defer', at: T + 10_000, why: 'circuit open' },
    ]);
    const later = T + 10_000;
    const { verdicts } = admitGroup(failed, 2, later, P);
    expect(verdicts).toEqual([
      { kind: 'send' },
      { kind: 'defer', at: later + PROBE_RECHECK_MS, why: 'circuit probing' },
    ]);
  });

  it('disables on 410 and refuses everything after, saying it happened now', () => {
    const { state, disabledNow } = recordGroup(
      initialEndpoint(T, P),
      [{ kind: 'dead', reason: 'gone', status: 410, disable: true }],
      T,
      P,
    );
    expect(disabledNow).toBe(true);
    expect(breakerLevel(state)).toBe(3);
    expect(admitGroup(state, 2, T, P).verdicts).toEqual([
      { kind: 'refuse', reason: 'endpoint disabled' },
      { kind: 'refuse', reason: 'endpoint disabled' },
    ]);
    expect(recordGroup(state, [{ kind: 'ok' }], T, P).disabledNow).toBe(false);
  });

  it('throttles on 429 with Retry-After: the bucket pauses until then', () => {
    const { state } = recordGroup(
      initialEndpoint(T, P),
      [
        {
          kind: 'retry',
          at: T + 5000,
          error: 'status 429',
          status: 429,
          throttle: true,
          retryAfter: T + 5000,
        },
      ],
      T,
      P,
    );
    expect(state.breaker.state).toBe('closed');
    expect(admitGroup(state, 1, T + 100, P).verdicts).toEqual([
      { kind: 'defer', at: T + 5000, why: 'rate limited' },
    ]);
  });
});
