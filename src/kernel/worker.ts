import type { Logger } from 'pino';

/**
 * The one background-loop primitive (modelled on pg-boss's `worker.ts`): a dumb, abortable polling
 * loop that ticks, sleeps, wakes on demand, backs off on error and stops. Every loop in the gateway
 * (the relay, the delivery lanes, approval expiry, the task supervisor, the digest flusher, …) is one
 * of these, so each shares one answer to "what happens on error, on a wake during a pass, on stop".
 *
 * The spec is plain data plus `tick`, so a module can declare its workers and let its host start them.
 */
export interface WorkerSpec {
  /** Names the loop in logs (`approvals.expiry`, `delivery`). */
  name: string;
  /**
   * One pass. `true`: more work may be ready right now, so the next pass runs at once instead of after
   * `intervalMs`. The signal aborts when `stop()` is called; a tick may ignore it and just finish.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a tick with nothing to report returns nothing
  tick(signal: AbortSignal): Promise<boolean | void>;
  /** The sleep between passes that found nothing more to do. A `wake()` cuts it short. */
  intervalMs: number;
  /** After a failed pass; defaults to `DEFAULT_BACKOFF` measured from `intervalMs`. Reset by a success. */
  backoff?: Backoff;
  /** Told of every failed pass and the wait before the next; default: the logger, with the name. */
  onError?(err: unknown, retryInMs: number): void;
  /** Run the first pass at once (a claim loop) rather than after `intervalMs` (an hourly sweep). */
  immediate?: boolean;
  /**
   * Passes that may run side by side (the delivery engine keeps one batch in flight while another
   * commits). Each lane sleeps on its own; a wake starts the longest-idle lane, not all of them, and a
   * wake that finds every lane busy is kept: the next lane to finish runs another pass at once.
   */
  concurrency?: number;
}

export interface Backoff {
  /** The wait after the first failure. */
  minMs: number;
  /** The longest wait, however many passes failed in a row. */
  maxMs: number;
  /** Each further failure multiplies the wait by this; default 2. */
  factor?: number;
}

export interface Worker {
  readonly name: string;
  /**
   * Something to do: one idle lane runs a pass now (a back-off is cut short too: the store may be
   * back); during a pass, exactly one more pass runs right after it, however many wakes came.
   */
  wake(): void;
  /** Aborts the sleeps at once and the running passes' signals; resolves when those passes finish. */
  stop(): Promise<void>;
  /** Between start and the end of `stop()`. */
  readonly running: boolean;
}

/** An error that keeps recurring is retried at least a minute apart, not once per interval. */
export const DEFAULT_BACKOFF_MAX_MS = 60_000;

/** Starts the loop now. Timers are unref'd: a worker never keeps the process alive by itself. */
export function startWorker(spec: WorkerSpec, logger?: Logger): Worker {
  const abort = new AbortController();
  const signal = abort.signal;
  const interval = spec.intervalMs;
  const minMs = spec.backoff?.minMs ?? interval;
  const maxMs = spec.backoff?.maxMs ?? Math.max(interval, DEFAULT_BACKOFF_MAX_MS);
  const factor = spec.backoff?.factor ?? 2;
  const onError =
    spec.onError ??
    ((err: unknown, retryInMs: number) =>
      logger?.error({ err, worker: spec.name, retryInMs }, `${spec.name} failed; backing off`));
  /** Sleeping lanes' wake-ups, oldest first: an array, so a wake allocates nothing. */
  const sleepers: (() => void)[] = [];
  /** A wake that found no lane asleep. */
  let pending = false;
  /** `signal.aborted`, as a plain local: it is read on every pass of a loop that may run very often. */
  let stopping = false;
  let running = true;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        const i = sleepers.indexOf(done);
        if (i >= 0) sleepers.splice(i, 1);
        resolve();
      }
      sleepers.push(done);
    });
  }

  async function lane(): Promise<void> {
    let failedWait = 0;
    if (!spec.immediate) await sleep(interval);
    while (!stopping) {
      let more = false;
      try {
        more = (await spec.tick(signal)) === true;
        failedWait = 0;
      } catch (err) {
        failedWait = failedWait === 0 ? Math.min(minMs, maxMs) : Math.min(failedWait * factor, maxMs);
        // An error raised because stop() aborted the pass is the stop, not a failure.
        if (!stopping) onError(err, failedWait);
      }
      if (stopping) break;
      if (failedWait === 0 && (more || pending)) {
        pending = false;
        continue;
      }
      await sleep(failedWait || interval);
    }
  }

  const lanes = Array.from({ length: Math.max(1, spec.concurrency ?? 1) }, lane);
  const stopped = Promise.all(lanes).then(() => {
    running = false;
  });

  return {
    name: spec.name,
    get running() {
      return running;
    },
    wake() {
      // The longest-idle lane, and only one: the others would claim nothing (wake.test.ts).
      const first = sleepers.shift();
      if (first) first();
      else pending = true;
    },
    stop() {
      stopping = true;
      abort.abort();
      for (const wakeUp of sleepers.splice(0)) wakeUp();
      return stopped;
    },
  };
}
