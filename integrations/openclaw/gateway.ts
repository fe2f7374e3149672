/**
 * The plugin's only link to Switchboard: forward a hook to the gateway and turn its answer into an
 * OpenClaw result. Self-contained (no Switchboard imports) because OpenClaw loads this file on its own.
 */

export const HOOK_PATH = '/v1/runtimes/openclaw/hooks';

/** Below OpenClaw's 15 s before_tool_call budget, so the reason the agent sees is ours, not a bare timeout. */
export const DEFAULT_TIMEOUT_MS = 12_000;

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export type Severity = 'info' | 'warning' | 'critical';

export interface ApprovalRequest {
  title: string;
  description: string;
  severity?: Severity;
  timeoutMs?: number;
  timeoutBehavior?: 'allow' | 'deny';
}

/** OpenClaw's BeforeToolCallResult without the callback fields a JSON reply cannot carry. */
export interface BeforeToolCallResult {
  block?: boolean;
  blockReason?: string;
  params?: Record<string, unknown>;
  requireApproval?: ApprovalRequest;
}

export interface GatewayOptions {
  url: string;
  /** The bearer key; never logged, never put into a reason. */
  key?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON-safe copy: drops functions and signals, and survives cycles by giving up on the part. */
function jsonSafe(value: unknown): Json {
  try {
    const copy: unknown = JSON.parse(
      JSON.stringify(value ?? {}, (_key, inner: unknown) =>
        inner instanceof AbortSignal ? undefined : inner,
      ),
    );
    return isRecord(copy) ? copy : {};
  } catch {
    return {};
  }
}

export function payloadFor(hook: string, event: unknown, ctx: unknown): Json {
  return { hook_event_name: hook, event: jsonSafe(event), ctx: jsonSafe(ctx) };
}

const failClosed = (why: string): BeforeToolCallResult => ({
  block: true,
  blockReason: `Switchboard: ${why}; the call is blocked until the gateway answers.`,
});

const SEVERITIES = new Set(['info', 'warning', 'critical']);
const RESULT_KEYS = new Set(['block', 'blockReason', 'params', 'requireApproval']);

function approvalOf(value: unknown): ApprovalRequest | undefined {
  if (!isRecord(value) || typeof value.title !== 'string' || typeof value.description !== 'string')
    return undefined;
  const approval: ApprovalRequest = { title: value.title, description: value.description };
  if (typeof value.severity === 'string' && SEVERITIES.has(value.severity)) {
    approval.severity = value.severity as Severity;
  }
  if (typeof value.timeoutMs === 'number' && value.timeoutMs > 0) approval.timeoutMs = value.timeoutMs;
  if (value.timeoutBehavior === 'allow' || value.timeoutBehavior === 'deny') {
    approval.timeoutBehavior = value.timeoutBehavior;
  }
  return approval;
}

/** Anything but a well-formed result blocks: a reply we cannot read is not permission to run. */
export function toResult(body: unknown): BeforeToolCallResult {
  if (!isRecord(body)) return failClosed('the gateway reply is not a JSON object');
  const unknown = Object.keys(body).filter((key) => !RESULT_KEYS.has(key));
  if (unknown.length > 0)
    return failClosed(`the gateway reply has unexpected fields (${unknown.join(', ')})`);
  if (body.block === true) {
    return {
      block: true,
      blockReason: typeof body.blockReason === 'string' ? body.blockReason : 'Blocked by Switchboard.',
    };
  }
  const result: BeforeToolCallResult = {};
  if (body.params !== undefined) {
    if (!isRecord(body.params)) return failClosed('the gateway sent params that are not an object');
    result.params = body.params;
  }
  if (body.requireApproval !== undefined) {
    const approval = approvalOf(body.requireApproval);
    if (!approval) return failClosed('the gateway sent an approval request without a title and description');
    result.requireApproval = approval;
  }
  return result;
}

async function post(payload: Json, options: GatewayOptions): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  return (options.fetch ?? fetch)(new URL(HOOK_PATH, options.url), {
    method: 'POST',
    headers,
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(options.timeoutMs),
  });
}

/** Asks the gateway about a before_tool_call; fails closed, as OpenClaw itself does on a hook timeout. */
export async function askGateway(payload: Json, options: GatewayOptions): Promise<BeforeToolCallResult> {
  let response: Response;
  try {
    response = await post(payload, options);
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return failClosed(
      timedOut ? `the gateway did not answer within ${options.timeoutMs} ms` : 'the gateway is unreachable',
    );
  }
  if (!response.ok) return failClosed(`the gateway answered HTTP ${response.status}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return failClosed('the gateway reply is not JSON');
  }
  return toResult(body);
}

/** Records an observed hook; never throws and never delays the agent beyond the timeout. */
export async function notifyGateway(payload: Json, options: GatewayOptions): Promise<boolean> {
  try {
    const response = await post(payload, options);
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
