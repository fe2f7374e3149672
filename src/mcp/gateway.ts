import { setTimeout as sleep } from 'node:timers/promises';
import { readKeyFile } from '../kernel/auth.js';
import type { AskApprovalArgs, ReportProgressArgs } from '../notify/schema.js';
import type { ProgressResult } from '../notify/port.js';
import type { Receipt } from '../agents/port.js';
import type { ToolListing, TouchResponse } from '../reach/protocol.js';
import type { AskAgentRefusal } from './ask-agent.js';
import type { ApprovalOutcome, ProgressSink } from './tools.js';
import { outcomeOf } from './approval.js';
import { MODERN_VERSION, VERSION_KEY } from './wire.js';

/**
 * The gateway as `switchboard mcp` and `switchboard notify` reach it: `SWITCHBOARD_URL` with
 * `SWITCHBOARD_KEY`, the task from `SWITCHBOARD_TASK_ID`. Error messages carry the gateway's error
 * code and message, never the key.
 */

export const DEFAULT_URL = 'http://127.0.0.1:8787';
/** Seconds one `?wait=` holds the request; each return sends the client a progress notification. */
export const APPROVAL_WAIT_SECONDS = 10;

export interface GatewayOptions {
  url: string;
  key: string;
  taskId?: string;
  fetch?: typeof fetch;
}

export function gatewayFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayOptions {
  // SWITCHBOARD_KEY_FILE: what `switchboard setup` writes, the file `switchboard init` generated.
  const key =
    env.SWITCHBOARD_KEY || (env.SWITCHBOARD_KEY_FILE ? readKeyFile(env.SWITCHBOARD_KEY_FILE) : undefined);
  if (!key)
    throw new Error(
      env.SWITCHBOARD_KEY_FILE
        ? `SWITCHBOARD_KEY_FILE ${env.SWITCHBOARD_KEY_FILE} is missing or empty; switchboard keys list shows the key files`
        : 'SWITCHBOARD_KEY is not set; give the agent key the gateway issued (or SWITCHBOARD_KEY_FILE, its file)',
    );
  return {
    url: env.SWITCHBOARD_URL || DEFAULT_URL,
    key,
    ...(env.SWITCHBOARD_TASK_ID ? { taskId: env.SWITCHBOARD_TASK_ID } : {}),
  };
}

interface ApprovalAnswer {
  id: string;
  status?: string;
  state?: string;
  capability?: { id: string; expires_at: string; token: string };
  comment?: string | null;
}

export class Gateway {
  constructor(private readonly o: GatewayOptions) {}

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.o.key}`,
      accept: 'application/json',
    };
    if (this.o.taskId) headers['x-switchboard-task'] = this.o.taskId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await (this.o.fetch ?? fetch)(new URL(path, this.o.url), {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`the gateway answered ${res.status} without JSON`);
    }
    if (!res.ok) {
      const e = (json as { error?: { code?: string; message?: string } }).error;
      throw new Error(
        `the gateway answered ${res.status} ${e?.code ?? ''}: ${e?.message ?? 'no message'}`.replace(
          '  ',
          ' ',
        ),
      );
    }
    return json as T;
  }

  /** The reach registry; empty when the gateway runs no reach module (404) or has no tools. */
  async tools(): Promise<ToolListing[]> {
    try {
      return (await this.call<{ tools: ToolListing[] }>('GET', '/v1/tools')).tools;
    } catch (err) {
      if (/answered 404\b/.test((err as Error).message)) return [];
      throw err;
    }
  }

  /** Whether the gateway runs the agents module (`GET /v1/agents` answers), so `ask_agent` is offered. */
  async agentsOffered(): Promise<boolean> {
    try {
      await this.call<unknown>('GET', '/v1/agents');
      return true;
    } catch (err) {
      if (/answered 404\b/.test((err as Error).message)) return false;
      throw err;
    }
  }

  /**
   * `ask_agent` on stdio: `POST /v1/collaborations { skill, input }` under this key and task; the answer
   * is the receipt once the collaboration ended. A refusal (the gateway's error code and message) is
   * returned, not thrown, so the model reads the code first.
   */
  async askAgent(
    skill: string,
    input: unknown,
    signal?: AbortSignal,
  ): Promise<{ ok: true; receipt: Receipt } | { ok: false; refusal: AskAgentRefusal }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.o.key}`,
      accept: 'application/json',
      'content-type': 'application/json',
    };
    if (this.o.taskId) headers['x-switchboard-task'] = this.o.taskId;
    const res = await (this.o.fetch ?? fetch)(new URL('/v1/collaborations', this.o.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({ skill, input }),
      ...(signal ? { signal } : {}),
    });
    const json = (await res.json().catch(() => undefined)) as
      | (Receipt & { error?: { code?: string; message?: string; details?: unknown } })
      | undefined;
    if (res.ok && json && typeof json.ref_id === 'string') return { ok: true, receipt: json };
    const e = json?.error;
    return {
      ok: false,
      refusal: {
        code: e?.code ?? `HTTP_${res.status}`,
        message: e?.message ?? `the gateway answered ${res.status} without a receipt`,
        ...(e?.details !== undefined ? { details: e.details } : {}),
      },
    };
  }

  /**
   * One touch on the stream channel, so the answer comes when the tool is done whatever its own
   * channel (an MCP call waits), partial lines on the way. A refusal is returned, not thrown.
   */
  async touch(
    tool_name: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
    onPartial?: (text: string) => void,
  ): Promise<TouchResponse> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.o.key}`,
      accept: 'application/json',
      'content-type': 'application/json',
    };
    if (this.o.taskId) headers['x-switchboard-task'] = this.o.taskId;
    const res = await (this.o.fetch ?? fetch)(new URL('/v1/touch', this.o.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({ tool_name, params, channel: 'stream' }),
      ...(signal ? { signal } : {}),
    });
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream') && res.body) {
      // Events are read as they arrive, so partial lines reach the MCP client while the tool runs.
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let result: TouchResponse | undefined;
      for (;;) {
        const { done, value } = await reader.read();
        if (value) buffer += value;
        let at = buffer.indexOf('\n\n');
        while (at !== -1) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          at = buffer.indexOf('\n\n');
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!data) continue;
          if (event === 'partial') onPartial?.((JSON.parse(data) as { text: string }).text);
          if (event === 'result') result = JSON.parse(data) as TouchResponse;
        }
        if (done) break;
      }
      if (result) return result;
      throw new Error('the gateway ended the stream without a result');
    }
    const json = (await res.json().catch(() => undefined)) as
      | (TouchResponse & { error?: { code?: string } })
      | undefined;
    if (json && typeof json.request_id === 'string') return json;
    const e = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new Error(`the gateway answered ${res.status} ${e?.code ?? ''}: ${e?.message ?? 'no message'}`);
  }

  /**
   * Seed 000's "reject and alert" on stdio: a `report_progress` or `ask_approval` that names recipients
   * is refused here by the tool schema, and the gateway must also record it and tell the owner. The
   * call is handed to the gateway's `/mcp` as a stateless 2026-07-28 request, where the same check as
   * for HTTP clients runs under this key and task (http.ts `alertOnRecipients`); its answer, the same
   * refusal, is not needed. A gateway that cannot be reached is reported, never retried in a loop.
   */
  async reportRefusedCall(call: { id?: unknown; params: Record<string, unknown> }): Promise<void> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.o.key}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': MODERN_VERSION,
    };
    if (this.o.taskId) headers['x-switchboard-task'] = this.o.taskId;
    const meta = { ...((call.params._meta as Record<string, unknown> | undefined) ?? {}) };
    meta[VERSION_KEY] = MODERN_VERSION;
    const res = await (this.o.fetch ?? fetch)(new URL('/mcp', this.o.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: typeof call.id === 'number' || typeof call.id === 'string' ? call.id : 0,
        method: 'tools/call',
        params: { ...call.params, _meta: meta },
      }),
    });
    await res.body?.cancel();
    if (res.status === 401 || res.status === 403)
      throw new Error(`the gateway refused the key (${res.status}) while recording the refused call`);
  }

  reportProgress(args: ReportProgressArgs): Promise<ProgressResult> {
    return this.call<ProgressResult>('POST', '/v1/progress', args);
  }

  /** POST with `?wait=`, then GET the approval until it leaves `pending`, a progress notification per wait. */
  async askApproval(
    args: AskApprovalArgs,
    progress: ProgressSink,
    signal: AbortSignal,
    waitSeconds = APPROVAL_WAIT_SECONDS,
  ): Promise<ApprovalOutcome> {
    let a = await this.call<ApprovalAnswer>('POST', `/v1/approvals?wait=${waitSeconds}`, args, signal);
    const id = a.id;
    for (;;) {
      const state = a.state ?? a.status;
      if (state === 'approved' || state === 'rejected') {
        return outcomeOf({ state, capability: a.capability, comment: a.comment ?? null }, id);
      }
      if (state !== 'pending' || signal.aborted) return { outcome: 'timeout', approval_id: id };
      await progress(`still waiting for a decision on ${id}`);
      const started = Date.now();
      a = await this.call<ApprovalAnswer>(
        'GET',
        `/v1/approvals/${encodeURIComponent(id)}?wait=${waitSeconds}`,
        undefined,
        signal,
      );
      // A gateway that answers GET at once (no long poll) must not be polled in a tight loop.
      const left = waitSeconds * 1000 - (Date.now() - started);
      // An abort ends the wait early; the loop's next turn sees the aborted signal and returns.
      if ((a.state ?? a.status) === 'pending' && left > 0)
        await sleep(Math.min(left, 1000), undefined, { signal }).catch(() => {});
    }
  }
}
