import type { Rejected } from '../../source.js';
import { reject } from './request.js';

/**
 * Five minutes both ways: every Standard Webhooks reference library and Slack's SDK use it, wide
 * enough for clock skew and a queued retry, narrow enough that a captured request soon goes stale.
 */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Upper bound for a configured tolerance: beyond an hour a timestamp no longer limits replay. */
export const MAX_TOLERANCE_SECONDS = 3600;

export type TimestampCheck = { ok: true; ms: number } | { ok: false; rejected: Rejected };

/**
 * Checks a signed Unix timestamp against `nowMs`, rejecting it when it is more than `toleranceSeconds`
 * older or newer. Only plain integers are accepted: `parseInt("12abc")` leniency would let junk through.
 */
export function checkTimestamp(
  raw: string,
  headerName: string,
  nowMs: number,
  toleranceSeconds: number,
  unit: 's' | 'ms' = 's',
): TimestampCheck {
  if (!/^\d{1,16}$/.test(raw)) {
    return {
      ok: false,
      rejected: reject('bad_timestamp', `${headerName} must be an integer (Unix ${unit})`),
    };
  }
  const value = Number(raw);
  const ms = unit === 's' ? value * 1000 : value;
  // Whole seconds for second timestamps, as the reference libraries compare, so the edges agree with them.
  const skew = unit === 's' ? Math.floor(nowMs / 1000) - value : nowMs - value;
  const limit = unit === 's' ? toleranceSeconds : toleranceSeconds * 1000;
  if (skew > limit) {
    return {
      ok: false,
      rejected: reject('timestamp_too_old', `${headerName} is more than ${toleranceSeconds}s in the past`),
    };
  }
  if (-skew > limit) {
    return {
      ok: false,
      rejected: reject(
        'timestamp_in_future',
        `${headerName} is more than ${toleranceSeconds}s in the future`,
      ),
    };
  }
  return { ok: true, ms };
}
