import { z } from 'zod';

/**
 * Fifteen minutes: long enough for a person to notice a phone notification and decide, short enough
 * that an agent blocked on the answer does not hold a task (and its plan) open for hours. The plan is
 * frozen when asked; a plan approved long after it was made is a plan nobody re-read.
 */
export const DEFAULT_APPROVAL_TTL_SECONDS = 15 * 60;

/** The longest `?wait=` an HTTP request may hold: past five minutes proxies and clients time out anyway. */
export const MAX_WAIT_SECONDS = 300;

/**
 * How often a waiter re-reads the store: a decision made in this process wakes it at once, one made on
 * another replica too (the cluster's NOTIFY); this bound is how late a waiter sees a decision when that
 * notification was lost (the listening connection dropped).
 */
export const WAIT_POLL_MS = 500;

/** How often the expiry worker looks for past-due approvals; an expiry is seen at most this late. */
export const EXPIRY_SWEEP_MS = 5_000;

/** The `approvals:` config section (not yet wired into the main schema; see docs/approvals.md). */
export const approvalsConfigSchema = z.strictObject({
  ttl_seconds: z
    .number()
    .int()
    .min(10)
    .max(7 * 24 * 3600)
    .default(DEFAULT_APPROVAL_TTL_SECONDS),
  max_wait_seconds: z.number().int().min(1).max(3600).default(MAX_WAIT_SECONDS),
  wait_poll_ms: z.number().int().min(10).max(60_000).default(WAIT_POLL_MS),
  expiry_sweep_ms: z.number().int().min(10).max(600_000).default(EXPIRY_SWEEP_MS),
});

export type ApprovalsConfig = z.infer<typeof approvalsConfigSchema>;
