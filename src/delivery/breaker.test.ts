import { describe, expect, it } from 'vitest';
import {
  type BreakerConfig,
  type BreakerState,
  DEFAULT_BREAKER,
  type Signal,
  admit,
  breakerSignal,
  initialBreaker,
  record,
} from './breaker.js';

const cfg: BreakerConfig = { ...DEFAULT_BREAKER, disableAfterOpens: 3 };

/** A fake clock and the state it advances, as a relay would drive them. */
function drive(start = 0) {
  let now = start;
  let state: BreakerState = initialBreaker(now);
  return {
    get state() {
      return state;
    },
    tick(ms: number) {
      now += ms;
    },
    admit() {
      const a = admit(state, now, cfg);
      state = a.state;
      return a;
    },
    report(signal: Signal, times = 1) {
      for (let i = 0; i < times; i++) state = record(state, signal, now, cfg);
    },
  };
}

describe('the circuit breaker', () => {
  it('stays closed while failures are under half of the window', () => {
    const b = drive();
    b.report('success', 6);
    b.report('failure', 4);
    expect(b.state.state).toBe('closed');
  });

  it('does not trip on fewer than the minimum attempts, even if all fail', () => {
    const b = drive();
    b.report('failure', 9);
    expect(b.state.state).toBe('closed');
  });

  it('opens when half of at least ten attempts in a minute fail', () => {
    const b = drive();
    b.report('success', 5);
    b.report('failure', 5);
    expect(b.state).toMatchObject({ state: 'open', until: 30_000, opens: 1 });
    expect(b.admit()).toMatchObject({ kind: 'reject', reason: 'open', retryAt: 30_000 });
  });

  it('starts a fresh window after a minute, forgetting old failures', () => {
    const b = drive();
    b.report('failure', 8);
    b.tick(60_000);
    b.report('success', 5);
    b.report('failure', 4);
    expect(b.state).toMatchObject({ state: 'closed', attempts: 9, failures: 4 });
  });

  it('lets exactly one probe through after the cool-down', () => {
    const b = drive();
    b.report('failure', 10);
    b.tick(30_000);
    expect(b.admit()).toMatchObject({ kind: 'admit', probe: true });
    expect(b.state.state).toBe('half_open');
    expect(b.admit()).toMatchObject({ kind: 'reject', reason: 'probing' });
  });

  it('closes on a successful probe and forgets the opens', () => {
    const b = drive();
    b.report('failure', 10);
    b.tick(30_000);
    b.admit();
    b.report('success');
    expect(b.state).toMatchObject({ state: 'closed', attempts: 0, opens: 0 });
  });

  it('re-opens on a failed probe with a doubled cool-down', () => {
    const b = drive();
    b.report('failure', 10);
    b.tick(30_000);
    b.admit();
    b.report('failure');
    expect(b.state).toMatchObject({ state: 'open', opens: 2, until: 30_000 + 60_000 });
  });

  it('sends another probe when the first never reports back', () => {
    const b = drive();
    b.report('failure', 10);
    b.tick(30_000);
    b.admit();
    b.tick(cfg.probeTimeoutMs);
    expect(b.admit()).toMatchObject({ kind: 'admit', probe: true });
  });

  it('disables the endpoint after repeated opens', () => {
    const b = drive();
    b.report('failure', 10);
    for (let i = 0; i < 2; i++) {
      b.tick(cfg.maxCoolDownMs);
      b.admit();
      b.report('failure');
    }
    expect(b.state).toMatchObject({ state: 'disabled', opens: 3 });
    b.tick(24 * 3_600_000);
    expect(b.admit()).toMatchObject({ kind: 'reject', reason: 'disabled', retryAt: null });
  });

  it('caps the cool-down', () => {
    const many = { ...cfg, disableAfterOpens: 100 };
    const s = record({ state: 'half_open', probeAt: 0, opens: 20 }, 'failure', 0, many);
    expect(s).toMatchObject({ state: 'open', until: many.maxCoolDownMs });
  });

  it('ignores stragglers that report while open', () => {
    const b = drive();
    b.report('failure', 10);
    const open = b.state;
    b.report('success', 3);
    expect(b.state).toBe(open);
  });

  it('survives a JSON round trip, as it does in the store', () => {
    const b = drive();
    b.report('failure', 10);
    const copy = JSON.parse(JSON.stringify(b.state)) as BreakerState;
    expect(admit(copy, 30_000, cfg)).toMatchObject({ kind: 'admit', probe: true });
  });
});

describe('breakerSignal', () => {
  it('counts 5xx, network failures and unknowns, not 4xx, 429 or blocked URLs', () => {
    expect(breakerSignal({ kind: 'ok' })).toBe('success');
    expect(breakerSignal({ kind: 'retry', at: 0, error: 'status 503', status: 503 })).toBe('failure');
    expect(breakerSignal({ kind: 'retry', at: 0, error: 'refused' })).toBe('failure');
    expect(
      breakerSignal({ kind: 'retry', at: 0, error: 'status 429', status: 429, throttle: true }),
    ).toBeUndefined();
    expect(breakerSignal({ kind: 'unknown', error: 'timeout' })).toBe('failure');
    expect(breakerSignal({ kind: 'dead', reason: 'rejected with 400', status: 400 })).toBe('success');
    expect(breakerSignal({ kind: 'dead', reason: 'blocked: metadata' })).toBeUndefined();
  });

  it('does not count a 4xx a channel reads as transient (Feishu 230020 with HTTP 400), but does a 502', () => {
    expect(breakerSignal({ kind: 'retry', at: 0, error: 'feishu code 230020', status: 400 })).toBeUndefined();
    expect(breakerSignal({ kind: 'retry', at: 0, error: 'status 408', status: 408 })).toBeUndefined();
    expect(breakerSignal({ kind: 'retry', at: 0, error: 'status 502', status: 502, throttle: true })).toBe(
      'failure',
    );
    expect(breakerSignal({ kind: 'retry', at: 0, error: 'dingtalk errcode 130101', status: 200 })).toBe(
      'failure',
    );
  });
});
