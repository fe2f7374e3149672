import type { Logger } from 'pino';
import { DeadlineReached, GatewayStopping, jsonProblem, onAbort } from './guard.js';
import type { TouchCaller } from './port.js';
import { type TouchError, TouchFailure } from './protocol.js';
import type { Tool } from './registry.js';

/**
 * One run of a tool's backend under its deadline: the signal aborts at the deadline (the backend
 * cancels, terminates or kills) or when the gateway stops, and a backend that ignores its signal
 * still loses the race — the answer is TIMEOUT at the deadline, never a late or invented result.
 * The result must be JSON; an in-process one is held to the same size cap as backend output.
 */

export type Outcome = { data: unknown } | { error: TouchError };

export interface AttemptOptions {
  caller: TouchCaller;
  owner: string;
  timeoutMs: number;
  maxBytes: number;
  stopping: AbortSignal;
  onPartial: ((text: string) => void) | undefined;
  logger: Logger;
}

export async function attempt(
  tool: Tool,
  params: Record<string, unknown>,
  o: AttemptOptions,
): Promise<Outcome> {
  // The deadline and a stop both end the run: the race below rejects first, then the backend's signal
  // aborts. Wired by hand rather than by listeners on `ac.signal` and `o.stopping` (EventTarget's add
  // and remove): ~7.5 -> ~6 µs of CPU per run of an in-process echo tool. The controller itself is made
  // when the backend first reads its signal (every sql, http and command backend does; an in-process
  // tool that never looks at `ctx.signal` costs none), already aborted if the run has ended.
  let ac: AbortController | undefined;
  let ended: Error | undefined;
  let fail!: (reason: Error) => void;
  const deadline = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const end = (reason: Error) => {
    ended ??= reason;
    fail(reason);
    ac?.abort(reason);
  };
  const timer = setTimeout(() => end(new DeadlineReached(o.timeoutMs)), o.timeoutMs);
  const unhook = onAbort(o.stopping, () => end(new GatewayStopping()));
  try {
    const running = tool.backend.run(params, {
      get signal() {
        if (!ac) {
          ac = new AbortController();
          if (ended) ac.abort(ended);
        }
        return ac.signal;
      },
      timeoutMs: o.timeoutMs,
      maxBytes: o.maxBytes,
      ...(o.onPartial ? { onPartial: o.onPartial } : {}),
      caller: o.caller.principal.name,
      task_id: o.caller.task_id,
      owner: o.owner,
    });
    const data = await Promise.race([running, deadline]);
    running.catch(() => {});
    const problem = jsonProblem(data);
    if (problem)
      return {
        error: {
          code: 'TOOL_FAILED',
          message: `the tool returned a value that is not JSON: ${problem}`,
          details: { status: 'not_json' },
        },
      };
    if (tool.kind === 'module' || tool.kind === 'memory') {
      const bytes = Buffer.byteLength(JSON.stringify(data ?? null));
      if (bytes > o.maxBytes)
        return {
          error: {
            code: 'RESULT_TOO_LARGE',
            message: `the result is ${bytes} bytes, over the limit of ${o.maxBytes}; ask for less`,
            details: { limit_bytes: o.maxBytes },
          },
        };
    }
    return { data: data ?? null };
  } catch (err) {
    if (err instanceof DeadlineReached || ended instanceof DeadlineReached)
      return {
        error: {
          code: 'TIMEOUT',
          message: `${tool.name} did not answer within ${o.timeoutMs} ms; it was stopped. Narrow the call, or use channel "async"`,
          details: { timeout_ms: o.timeoutMs },
        },
      };
    if (err instanceof GatewayStopping)
      return {
        error: {
          code: 'TOOL_FAILED',
          message: 'the gateway stopped while the tool ran',
          details: { status: 'stopping' },
        },
      };
    if (err instanceof TouchFailure) return { error: err.toError() };
    // An unexpected throw is logged here; the caller gets no internals.
    o.logger.warn({ err, tool: tool.name }, 'reach: a tool failed unexpectedly');
    return { error: { code: 'TOOL_FAILED', message: `${tool.name} failed`, details: { status: 'error' } } };
  } finally {
    clearTimeout(timer);
    unhook();
  }
}
