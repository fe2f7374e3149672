import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startWorker, type Worker, type WorkerSpec } from './worker.js';

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A tick that counts its calls and its overlap, and waits for the test to release each pass. */
function gatedTick() {
  const gates: Deferred[] = [];
  const signals: AbortSignal[] = [];
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const tick = async (signal: AbortSignal) => {
    calls += 1;
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    signals.push(signal);
    const gate = deferred();
    gates.push(gate);
    await gate.promise;
    inFlight -= 1;
  };
  return {
    tick,
    calls: () => calls,
    maxInFlight: () => maxInFlight,
    signals,
    /** Finishes the oldest unfinished pass. */
    release: () => gates.shift()?.resolve(),
  };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe('the worker loop', () => {
  let worker: Worker | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    const w = worker;
    worker = undefined;
    const stopping = w?.stop();
    await vi.runOnlyPendingTimersAsync();
    await stopping;
    vi.useRealTimers();
  });

  const start = (spec: Partial<WorkerSpec> & Pick<WorkerSpec, 'tick'>): Worker => {
    worker = startWorker({ name: 'test', intervalMs: 1_000, ...spec });
    return worker;
  };

  it('runs the first pass after the interval, or at once when asked to be immediate', async () => {
    let later = 0;
    let now = 0;
    start({ tick: async () => void later++ });
    const other = startWorker({
      name: 'immediate',
      intervalMs: 1_000,
      immediate: true,
      tick: async () => void now++,
    });
    await flush();
    expect([later, now]).toEqual([0, 1]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect([later, now]).toEqual([1, 2]);
    await other.stop();
  });

  it('sleeps the interval between passes that found nothing more to do', async () => {
    let calls = 0;
    start({ immediate: true, tick: async () => void calls++ });
    await flush();
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls).toBe(5);
  });

  it('never runs two passes at once, however often it is woken', async () => {
    const t = gatedTick();
    const w = start({ immediate: true, tick: t.tick });
    await flush();
    for (let i = 0; i < 5; i++) w.wake();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(t.calls()).toBe(1);
    t.release();
    await flush();
    t.release();
    await flush();
    expect(t.maxInFlight()).toBe(1);
  });

  it('runs exactly one more pass right after a pass during which it was woken', async () => {
    const t = gatedTick();
    const w = start({ immediate: true, tick: t.tick });
    await flush();
    w.wake();
    w.wake();
    w.wake();
    t.release();
    await flush();
    expect(t.calls()).toBe(2); // the kept wake, at once
    t.release();
    await flush();
    expect(t.calls()).toBe(2); // not one per wake: back to sleeping the interval
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.calls()).toBe(3);
    t.release();
  });

  it('cuts the sleep short on a wake', async () => {
    let calls = 0;
    const w = start({ intervalMs: 60_000, tick: async () => void calls++ });
    await flush();
    w.wake();
    await flush();
    expect(calls).toBe(1);
  });

  it('runs the next pass at once when a pass reports more work', async () => {
    let left = 3;
    let calls = 0;
    start({
      immediate: true,
      tick: async () => {
        calls += 1;
        return --left > 0;
      },
    });
    await flush();
    expect(calls).toBe(3);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toBe(4);
  });

  it('backs off exponentially up to the maximum after errors, and resets after a success', async () => {
    const waits: number[] = [];
    let failing = 5;
    let calls = 0;
    start({
      immediate: true,
      intervalMs: 100,
      backoff: { minMs: 1_000, maxMs: 5_000, factor: 2 },
      tick: async () => {
        calls += 1;
        if (failing-- > 0) throw new Error('store down');
      },
      onError: (_err, retryInMs) => waits.push(retryInMs),
    });
    await flush();
    expect(waits).toEqual([1_000]);
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1); // no spinning while backing off
    await vi.advanceTimersByTimeAsync(1 + 2_000 + 4_000 + 5_000 + 5_000);
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(calls).toBe(6); // the sixth pass succeeded
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(7); // back on the interval
    failing = 1;
    await vi.advanceTimersByTimeAsync(100);
    expect(waits.at(-1)).toBe(1_000); // a fresh failure starts from the minimum again
  });

  it('waits at least the interval after an error by default, doubling up to a minute', async () => {
    const waits: number[] = [];
    start({
      immediate: true,
      intervalMs: 20_000,
      tick: async () => {
        throw new Error('store down');
      },
      onError: (_err, retryInMs) => waits.push(retryInMs),
    });
    await vi.advanceTimersByTimeAsync(20_000 + 40_000 + 60_000);
    expect(waits).toEqual([20_000, 40_000, 60_000, 60_000]);
  });

  it('logs a failed pass with the worker name when no onError is given', async () => {
    const error = vi.fn();
    const logger = { error } as unknown as Parameters<typeof startWorker>[1];
    worker = startWorker(
      {
        name: 'approvals.expiry',
        intervalMs: 1_000,
        immediate: true,
        tick: async () => {
          throw new Error('boom');
        },
      },
      logger,
    );
    await flush();
    expect(error).toHaveBeenCalledWith(
      expect.objectContaining({ worker: 'approvals.expiry', retryInMs: 1_000 }),
      'approvals.expiry failed; backing off',
    );
  });

  it('stops at once from a sleep, without waiting for the interval', async () => {
    let calls = 0;
    const w = start({ immediate: true, intervalMs: 3_600_000, tick: async () => void calls++ });
    await flush();
    expect(w.running).toBe(true);
    let stopped = false;
    void w.stop().then(() => {
      stopped = true;
    });
    await flush();
    expect(stopped).toBe(true);
    expect(w.running).toBe(false);
    expect(calls).toBe(1);
  });

  it('aborts the running pass signal on stop and resolves only when that pass finishes', async () => {
    const t = gatedTick();
    const w = start({ immediate: true, tick: t.tick });
    await flush();
    let stopped = false;
    void w.stop().then(() => {
      stopped = true;
    });
    await flush();
    expect(t.signals[0]?.aborted).toBe(true);
    expect(stopped).toBe(false);
    t.release();
    await flush();
    expect(stopped).toBe(true);
    expect(t.calls()).toBe(1); // no pass after the stop, though the pass was woken by nothing
  });

  it('does not report an error raised by a pass that stop() aborted', async () => {
    const onError = vi.fn();
    const w = start({
      immediate: true,
      onError,
      tick: (signal) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    await flush();
    await w.stop();
    expect(onError).not.toHaveBeenCalled();
  });
});

describe('a worker with several lanes', () => {
  let worker: Worker | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    const stopping = worker?.stop();
    worker = undefined;
    await vi.runOnlyPendingTimersAsync();
    await stopping;
    vi.useRealTimers();
  });

  it('starts one idle lane per wake, and keeps one wake that finds every lane busy', async () => {
    const t = gatedTick();
    worker = startWorker({
      name: 'lanes',
      intervalMs: 3_600_000,
      immediate: true,
      concurrency: 3,
      tick: t.tick,
    });
    await flush();
    expect(t.calls()).toBe(3); // every lane's first pass
    t.release();
    t.release();
    t.release();
    await flush();
    expect(t.calls()).toBe(3); // all asleep

    worker.wake();
    await flush();
    expect(t.calls()).toBe(4); // one lane, not three

    worker.wake();
    worker.wake();
    worker.wake(); // two idle lanes start; this one finds none idle and is kept
    worker.wake(); // kept too, but as the same one pass
    await flush();
    expect(t.calls()).toBe(6);
    expect(t.maxInFlight()).toBe(3);
    t.release();
    await flush();
    expect(t.calls()).toBe(7); // the lane that finished first runs the kept wake
    for (let i = 0; i < 3; i++) t.release();
    await flush();
    expect(t.calls()).toBe(7);
  });
});

describe('worker timers', () => {
  it('do not keep the process alive', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const worker = startWorker({ name: 'idle', intervalMs: 3_600_000, tick: async () => {} });
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    spy.mockRestore();
    expect(timer.hasRef()).toBe(false);
    await worker.stop();
  });
});
