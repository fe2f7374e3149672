import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { attempt } from './attempt.js';
import { DeadlineReached, GatewayStopping, jsonProblem } from './guard.js';
import type { Tool } from './registry.js';

/** One run of a backend under its deadline and the gateway's stop (attempt.ts). */

const logger = pino({ level: 'silent' });
const caller = { principal: { name: 'bot', role: 'agent' as const }, task_id: null };

function toolOf(run: (signal: AbortSignal) => Promise<unknown>): Tool {
  return {
    name: 't.run',
    kind: 'module',
    backend: { run: (_p: unknown, ctx: { signal: AbortSignal }) => run(ctx.signal) },
  } as unknown as Tool;
}

/** A backend that answers only when its signal aborts, and says why it was aborted. */
const waitsForSignal = (seen: unknown[]) =>
  toolOf(
    (signal) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => {
          seen.push(signal.reason);
          reject(signal.reason);
        });
      }),
  );

const options = (stopping: AbortSignal, timeoutMs = 5_000) => ({
  caller,
  owner: 'bot',
  timeoutMs,
  maxBytes: 1 << 20,
  stopping,
  onPartial: undefined,
  logger,
});

describe('attempt', () => {
  it('ends every run waiting on the gateway when it stops, as TOOL_FAILED stopping, and aborts each backend', async () => {
    const stop = new AbortController();
    const seen: unknown[] = [];
    const runs = Array.from({ length: 3 }, () => attempt(waitsForSignal(seen), {}, options(stop.signal)));
    stop.abort();
    for (const r of await Promise.all(runs))
      expect(r).toMatchObject({ error: { code: 'TOOL_FAILED', details: { status: 'stopping' } } });
    expect(seen).toHaveLength(3);
    expect(seen.every((s) => s instanceof GatewayStopping)).toBe(true);
  });

  it('leaves a finished run alone when the gateway stops later', async () => {
    const stop = new AbortController();
    let aborted = false;
    const r = await attempt(
      toolOf(async (signal) => {
        signal.addEventListener('abort', () => {
          aborted = true;
        });
        return { ok: 1 };
      }),
      {},
      options(stop.signal),
    );
    stop.abort();
    expect(r).toEqual({ data: { ok: 1 } });
    expect(aborted).toBe(false);
  });

  it('answers TIMEOUT at the deadline, aborting the backend, and also when the backend ignores its signal', async () => {
    const seen: unknown[] = [];
    const stopping = new AbortController().signal;
    const r = await attempt(waitsForSignal(seen), {}, options(stopping, 30));
    expect(r).toMatchObject({ error: { code: 'TIMEOUT', details: { timeout_ms: 30 } } });
    expect(seen[0]).toBeInstanceOf(DeadlineReached);
    const deaf = await attempt(
      toolOf(() => new Promise(() => {})),
      {},
      options(stopping, 30),
    );
    expect(deaf).toMatchObject({ error: { code: 'TIMEOUT' } });
  });

  it('hands a backend that first reads its signal after the deadline one already aborted, with the reason', async () => {
    let late: AbortSignal | undefined;
    const tool = {
      name: 't.late',
      kind: 'module',
      backend: {
        run: (_p: unknown, ctx: { signal: AbortSignal }) =>
          new Promise((resolve) =>
            setTimeout(() => {
              late = ctx.signal;
              resolve({ ok: 1 });
            }, 60),
          ),
      },
    } as unknown as Tool;
    const r = await attempt(tool, {}, options(new AbortController().signal, 20));
    expect(r).toMatchObject({ error: { code: 'TIMEOUT' } });
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(late?.aborted).toBe(true);
    expect(late?.reason).toBeInstanceOf(DeadlineReached);
  });
});

describe('jsonProblem', () => {
  it('names the first path that JSON cannot carry, and nothing for JSON', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(jsonProblem({ rows: [{ a: 1, b: [null, 'x', true] }] })).toBeUndefined();
    expect(jsonProblem({ rows: [{ a: 1 }, { at: new Date(0) }] })).toBe(
      'result.rows[1].at is a Date, not a plain JSON object',
    );
    expect(jsonProblem({ n: Number.NaN })).toBe('result.n is NaN, which JSON cannot carry');
    expect(jsonProblem({ f: undefined })).toBe('result.f is undefined, which JSON cannot carry');
    expect(jsonProblem(deep)).toMatch(/nested deeper than 64 levels$/);
  });
});
