/**
 * `switchboard tools list` and `switchboard touch <tool> <json>`: clients of the reach API
 * (GET /v1/tools, POST /v1/touch, GET /v1/touch/{id}) at `$SWITCHBOARD_URL` with `$SWITCHBOARD_KEY`,
 * the task from `$SWITCHBOARD_TASK_ID`. A touch that fails prints `CODE: message` and exits 1.
 */

import {
  clientKey,
  DEFAULT_URL,
  gatewayCall,
  noKeyMessage,
  unauthorizedMessage,
  unreachableMessage,
} from './client.js';
import { prefix } from '../text/index.js';

export interface ReachCliOptions {
  json?: boolean;
  channel?: string;
  requestId?: string;
  /** A webhook channel the finished async touch is pushed to. */
  callback?: string;
  /** Seconds: shortens the tool's own deadline. */
  timeout?: string;
  /** With an async touch: poll until it is done (default true; --no-wait prints the job id). */
  wait?: boolean;
  url?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
  /** Poll interval for --wait (tests). */
  pollMs?: number;
}

interface Listing {
  name: string;
  kind: string;
  description: string;
  channel: string;
  timeout_ms: number;
  permission: string;
}

interface Response {
  request_id: string;
  ok: boolean;
  status?: string;
  data?: unknown;
  text?: string;
  error?: { code: string; message: string; details?: unknown };
}

const print = (o: ReachCliOptions, line: string) =>
  (o.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);

const MESSAGES = {
  roles: ['agent', 'admin'] as const,
  forbidden: (e: { message?: string } | undefined) =>
    `this key may not do that: ${e?.message ?? 'forbidden'}`,
};

export async function listTools(o: ReachCliOptions = {}): Promise<void> {
  const body = (await gatewayCall('GET', '/v1/tools', o, MESSAGES)) as { tools: Listing[] };
  for (const t of body.tools) {
    if (o.json) print(o, JSON.stringify(t));
    else
      print(
        o,
        `${t.name}  ${t.kind}  ${t.permission}  ${t.channel}  ${t.timeout_ms / 1000}s  ${t.description}`.trimEnd(),
      );
  }
}

/** POST /v1/touch, whose refusals (4xx/5xx) carry a TouchResponse that is printed, not thrown. */
async function post(o: ReachCliOptions, body: unknown): Promise<Response> {
  const env = o.env ?? process.env;
  const base = (o.url ?? env.SWITCHBOARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  const key = clientKey(env, MESSAGES.roles);
  if (!key) throw new Error(noKeyMessage(MESSAGES.roles));
  let res: globalThis.Response;
  try {
    res = await fetch(`${base}/v1/touch`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(env.SWITCHBOARD_TASK_ID ? { 'x-switchboard-task': env.SWITCHBOARD_TASK_ID } : {}),
      },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new Error(unreachableMessage(base, err));
  }
  const parsed = (await res.json().catch(() => undefined)) as
    | (Response & { error?: { message: string } })
    | undefined;
  if (parsed && typeof parsed.request_id === 'string') return parsed;
  if (res.status === 401) throw new Error(unauthorizedMessage(base));
  const e = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
  throw new Error(`${e?.message ?? `the gateway answered ${res.status}`}${e?.code ? ` (${e.code})` : ''}`);
}

export async function touch(tool: string, json: string | undefined, o: ReachCliOptions = {}): Promise<void> {
  let params: unknown = {};
  if (json !== undefined) {
    try {
      params = JSON.parse(json);
    } catch {
      throw new Error(`the params are not JSON: ${prefix(json, 80)} (quote them: '{"status":"open"}')`);
    }
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params))
    throw new Error('the params must be a JSON object, e.g. \'{"status":"open"}\'');
  const timeout = o.timeout !== undefined ? Number(o.timeout) : undefined;
  if (timeout !== undefined && !(timeout > 0)) throw new Error('--timeout is a number of seconds above 0');
  let r = await post(o, {
    tool_name: tool,
    params,
    ...(o.channel ? { channel: o.channel } : {}),
    ...(o.requestId ? { request_id: o.requestId } : {}),
    ...(o.callback ? { callback: o.callback } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
  });
  const pending = (x: Response) => x.ok && (x.status === 'running' || x.status === 'awaiting_approval');
  if (pending(r) && o.wait !== false) {
    for (;;) {
      await new Promise((res) => setTimeout(res, o.pollMs ?? 500));
      r = (await gatewayCall(
        'GET',
        `/v1/touch/${encodeURIComponent(r.request_id)}`,
        o,
        MESSAGES,
      )) as Response;
      if (!pending(r)) break;
    }
  }
  if (o.json) print(o, JSON.stringify(r));
  else if (r.ok && pending(r)) print(o, `${r.status}: ${r.request_id} (GET /v1/touch/${r.request_id})`);
  else if (r.ok) print(o, r.text ?? JSON.stringify(r.data ?? null));
  if (!r.ok) throw new Error(`${r.error?.code ?? 'TOOL_FAILED'}: ${r.error?.message ?? 'the touch failed'}`);
}
