import type { Logger } from 'pino';

/** After a failed sweep (store down), wait longer before the next, up to this, instead of spinning. */
const MAX_BACKOFF_MS = 60_000;

export interface Worker {
  stop(): Promise<void>;
}

/**
 * A dumb, abortable loop: sweep, sleep, repeat. A failing sweep is logged and retried with doubling
 * back-off; `stop()` aborts the sleep and waits for a sweep in progress to finish.
 */
export function startExpiryWorker(opts: {
  sweep: () => Promise<number>;
  intervalMs: number;
  logger: Logger;
}): Worker {
  const abort = new AbortController();
  const loop = (async () => {
    let delay = opts.intervalMs;
    while (!abort.signal.aborted) {
      try {
        const n = await opts.sweep();
        if (n > 0) opts.logger.info({ expired: n }, 'expired past-due approvals');
        delay = opts.intervalMs;
      } catch (err) {
        delay = Math.min(delay * 2, MAX_BACKOFF_MS);
        opts.logger.warn({ err, retry_in_ms: delay }, 'approval expiry sweep failed');
      }
      await sleep(delay, abort.signal);
    }
  })();
  return {
    async stop() {
      abort.abort();
      await loop;
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
