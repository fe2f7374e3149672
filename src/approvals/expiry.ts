import type { Logger } from 'pino';
import { startWorker, type Worker, type WorkerSpec } from '../kernel/worker.js';

/** After a failed sweep (store down), wait longer before the next, up to this, instead of spinning. */
const MAX_BACKOFF_MS = 60_000;

export type { Worker };

export interface ExpiryOptions {
  sweep: () => Promise<number>;
  intervalMs: number;
  logger: Logger;
}

/**
 * Sweep, sleep, repeat, as a kernel worker: a failing sweep is logged and retried with doubling
 * back-off (the first retry two intervals later); `stop()` aborts the sleep and waits for a sweep in
 * progress to finish.
 */
export function expiryWorker(opts: ExpiryOptions): WorkerSpec {
  return {
    name: 'approvals.expiry',
    intervalMs: opts.intervalMs,
    immediate: true,
    backoff: { minMs: Math.min(opts.intervalMs * 2, MAX_BACKOFF_MS), maxMs: MAX_BACKOFF_MS, factor: 2 },
    tick: async () => {
      const n = await opts.sweep();
      if (n > 0) opts.logger.info({ expired: n }, 'expired past-due approvals');
    },
    onError: (err, retryInMs) =>
      opts.logger.warn({ err, retry_in_ms: retryInMs }, 'approval expiry sweep failed'),
  };
}

export function startExpiryWorker(opts: ExpiryOptions): Worker {
  return startWorker(expiryWorker(opts));
}
