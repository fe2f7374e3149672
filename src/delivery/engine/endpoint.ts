import {
  admit,
  type BreakerConfig,
  type BreakerState,
  breakerSignal,
  initialBreaker,
  record,
} from '../breaker.js';
import { type BucketState, initialBucket, type RateConfig, take, throttle } from '../ratelimit.js';
import type { Outcome } from '../retry.js';
import type { Db } from '../../store/port.js';
import * as q from './sql.js';
import type { EndpointRow } from './sql.js';

/**
 * The per-destination state every replica shares (breaker, rate bucket, disabled flag), the two
 * pure folds the engine runs over it inside a transaction: admission of a claimed group before
 * sending, and recording of the group's outcomes after (pinned by `endpoint.test.ts`), and the row's
 * load and save in that transaction.
 */

export interface EndpointState {
  breaker: BreakerState;
  bucket: BucketState;
  disabled: boolean;
}

export interface EndpointPolicy {
  breaker: BreakerConfig;
  rate: RateConfig;
}

/** While a half-open probe is out, the others look again soon rather than after the probe timeout. */
export const PROBE_RECHECK_MS = 1_000;

export function initialEndpoint(now: number, p: EndpointPolicy): EndpointState {
  return { breaker: initialBreaker(now), bucket: initialBucket(now, p.rate), disabled: false };
}

export function parseEndpoint(row: EndpointRow | undefined, now: number, p: EndpointPolicy): EndpointState {
  if (!row) return initialEndpoint(now, p);
  return {
    breaker: JSON.parse(row.breaker) as BreakerState,
    bucket: JSON.parse(row.bucket) as BucketState,
    disabled: Number(row.disabled) === 1,
  };
}

export type Admitted =
  | { kind: 'send' }
  | { kind: 'defer'; at: number; why: string }
  | { kind: 'refuse'; reason: string };

/** Admits `count` attempts in order; each one takes a token and passes the breaker or waits. */
export function admitGroup(
  s: EndpointState,
  count: number,
  now: number,
  p: EndpointPolicy,
): { state: EndpointState; verdicts: Admitted[] } {
  let state = s;
  const verdicts: Admitted[] = [];
  for (let i = 0; i < count; i++) {
    if (state.disabled) {
      verdicts.push({ kind: 'refuse', reason: 'endpoint disabled' });
      continue;
    }
    const token = take(state.bucket, now, p.rate);
    state = { ...state, bucket: token.state };
    if (token.kind === 'wait') {
      verdicts.push({ kind: 'defer', at: token.retryAt, why: 'rate limited' });
      continue;
    }
    const a = admit(state.breaker, now, p.breaker);
    state = { ...state, breaker: a.state };
    if (a.kind === 'admit') {
      verdicts.push({ kind: 'send' });
    } else if (a.reason === 'disabled') {
      state = { ...state, disabled: true };
      verdicts.push({ kind: 'refuse', reason: 'endpoint disabled' });
    } else {
      const at =
        a.reason === 'probing'
          ? Math.min(a.retryAt ?? now + PROBE_RECHECK_MS, now + PROBE_RECHECK_MS)
          : (a.retryAt ?? now + PROBE_RECHECK_MS);
      verdicts.push({ kind: 'defer', at, why: `circuit ${a.reason}` });
    }
  }
  return { state, verdicts };
}

/** Folds outcomes in; says whether this fold disabled the endpoint (410, or the breaker gave up). */
export function recordGroup(
  s: EndpointState,
  outcomes: readonly Outcome[],
  now: number,
  p: EndpointPolicy,
): { state: EndpointState; disabledNow: boolean } {
  let state = s;
  for (const o of outcomes) {
    const signal = breakerSignal(o);
    if (signal) state = { ...state, breaker: record(state.breaker, signal, now, p.breaker) };
    if (o.kind === 'retry' && o.throttle)
      state = { ...state, bucket: throttle(state.bucket, now, o.retryAfter, p.rate) };
    if ((o.kind === 'dead' && o.disable) || state.breaker.state === 'disabled')
      state = { ...state, disabled: true };
  }
  return { state, disabledNow: state.disabled && !s.disabled };
}

/** For the breaker gauge: 0 closed, 1 half-open, 2 open, 3 disabled. */
export function breakerLevel(s: EndpointState): number {
  if (s.disabled) return 3;
  return { closed: 0, half_open: 1, open: 2, disabled: 3 }[s.breaker.state];
}

/** The destination's row, read (and locked, on PostgreSQL) in the caller's transaction. */
export async function loadEndpoint(
  tx: Db,
  dest: string,
  now: number,
  p: EndpointPolicy,
): Promise<EndpointState> {
  const rows = await tx.query<EndpointRow>(q.selectEndpoint(tx.dialect, dest));
  if (rows.length === 0 && tx.dialect === 'postgres') {
    // Create it, then lock it: concurrent first attempts to a new endpoint must not both win.
    const fresh = parseEndpoint(undefined, now, p);
    await tx.query(q.ensureEndpoint(dest, JSON.stringify(fresh.breaker), JSON.stringify(fresh.bucket), now));
    const again = await tx.query<EndpointRow>(q.selectEndpoint(tx.dialect, dest));
    return parseEndpoint(again[0], now, p);
  }
  return parseEndpoint(rows[0], now, p);
}

export async function saveEndpoint(tx: Db, dest: string, s: EndpointState, now: number): Promise<void> {
  await tx.query(
    q.upsertEndpoint({
      destination: dest,
      breaker: JSON.stringify(s.breaker),
      bucket: JSON.stringify(s.bucket),
      disabled: s.disabled,
      now,
    }),
  );
}
