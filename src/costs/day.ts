import { AppError } from '../errors/index.js';

const DAY_MS = 86_400_000;

/** The UTC day of an epoch-ms time, `YYYY-MM-DD`: budgets and ledger rows are per UTC day. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS };

/**
 * `since` as the first UTC day it covers: `7d`, `24h`, `2w`, `30m` back from now, or a date or time
 * (ISO 8601). The ledger is kept per day, so a window starts at its first day's midnight.
 */
export function sinceDay(since: string, now: number): string {
  const rel = /^(\d{1,5})([mhdw])$/.exec(since);
  if (rel) return dayOf(now - Number(rel[1]) * UNITS[rel[2]!]!);
  const at = Date.parse(since);
  if (/^\d{4}-\d{2}-\d{2}/.test(since) && Number.isFinite(at)) return dayOf(at);
  throw new AppError(
    'validation_failed',
    `since: "${since.slice(0, 40)}" is neither a span back from now (7d, 24h, 2w, 30m) nor a date (2026-11-01)`,
  );
}
