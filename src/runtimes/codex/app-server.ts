/**
 * The Codex App Server protocol (reference/runtimes.md §2.1, `codex-rs/app-server` README): JSON-RPC
 * 2.0 without the `"jsonrpc"` field, one JSON object per line over stdio. Thread → turn → item, with
 * `item/started`, deltas and `item/completed`; the server asks the client to approve a command or a
 * file change with a *request* and pauses the turn until the response.
 *
 * What `switchboard codex-app-server` (src/hook/app-server.ts) makes of it, as pure functions:
 * an approval request becomes a hook payload for the `codex` route (its event name is the method, its
 * reply style `permission`), the route's reply becomes the server's decision, and a notification
 * becomes an observe-only hook payload (deltas fold into their item's `item/completed`).
 */

type Json = Record<string, unknown>;

/** v2 approval requests (turns started with `turn/start`) and the legacy v1 ones (`sendUserTurn`). */
export const APPROVAL_METHODS = [
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
  'execCommandApproval',
  'applyPatchApproval',
] as const;
export type ApprovalMethod = (typeof APPROVAL_METHODS)[number];

export const isApprovalMethod = (m: unknown): m is ApprovalMethod =>
  typeof m === 'string' && (APPROVAL_METHODS as readonly string[]).includes(m);

/** A line from either side, as far as the bridge reads it. */
export type RpcMessage =
  | { kind: 'request'; id: string | number; method: string; params: Json }
  | { kind: 'notification'; method: string; params: Json }
  | { kind: 'response'; id: string | number }
  | { kind: 'other' };

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function readRpc(line: string): RpcMessage {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { kind: 'other' };
  }
  const m = record(v);
  const id = m.id;
  const hasId = typeof id === 'string' || typeof id === 'number';
  if (typeof m.method === 'string') {
    const params = record(m.params);
    return hasId
      ? { kind: 'request', id: id as string | number, method: m.method, params }
      : { kind: 'notification', method: m.method, params };
  }
  if (hasId && ('result' in m || 'error' in m)) return { kind: 'response', id: id as string | number };
  return { kind: 'other' };
}

/** A `commandExecution` item's command is a string (v2) or argv (v1): the gate reads one string. */
function commandText(v: unknown): string | undefined {
  if (Array.isArray(v)) return v.every((a) => typeof a === 'string') ? v.join(' ') : undefined;
  return text(v);
}

/** What the gate should know of a file change: paths, and the diffs up to a bound. */
export const MAX_PATCH_CHARS = 64 * 1024;

function fileChanges(changes: unknown): { paths: string[]; patch: string } {
  const paths: string[] = [];
  const diffs: string[] = [];
  if (Array.isArray(changes)) {
    // v2 ThreadItem fileChange: [{ path, kind, diff }]
    for (const c of changes.map(record)) {
      if (text(c.path)) paths.push(c.path as string);
      if (text(c.diff)) diffs.push(c.diff as string);
    }
  } else {
    // v1 applyPatchApproval: { path: { type: add|delete, content } | { type: update, unified_diff } }
    for (const [path, change] of Object.entries(record(changes))) {
      paths.push(path);
      const c = record(change);
      const body = text(c.unified_diff) ?? text(c.content);
      if (body) diffs.push(`--- ${path}\n${body}`);
    }
  }
  return { paths, patch: diffs.join('\n').slice(0, MAX_PATCH_CHARS) };
}

/** The tool as the `codex` kind table names it (`Bash`, `apply_patch`, `mcp__server__tool`). */
function toolOf(item: Json): { tool: string; input: Json } | undefined {
  switch (item.type) {
    case 'commandExecution': {
      const command = commandText(item.command);
      return {
        tool: 'Bash',
        input: { ...(command ? { command } : {}), ...(text(item.cwd) ? { cwd: item.cwd } : {}) },
      };
    }
    case 'fileChange': {
      const { paths, patch } = fileChanges(item.changes);
      return { tool: 'apply_patch', input: { command: patch, paths } };
    }
    case 'mcpToolCall':
      return {
        tool: `mcp__${String(item.server ?? '')}__${String(item.tool ?? '')}`,
        input: record(item.arguments),
      };
    case 'dynamicToolCall':
      return { tool: String(item.tool ?? 'dynamic'), input: record(item.arguments) };
    case 'webSearch':
      return { tool: 'web_search', input: text(item.query) ? { query: item.query } : {} };
    default:
      return undefined;
  }
}

/**
 * The hook payload an approval request is decided as. `item` is the item this request is about, as
 * its `item/started` announced it (a v2 file-change request carries no diff of its own).
 */
export function approvalHook(method: ApprovalMethod, params: Json, item?: Json): Json {
  const base = {
    hook_event_name: method,
    session_id: text(params.threadId) ?? text(params.conversationId) ?? 'unknown',
    ...(text(params.turnId) ? { turn_id: params.turnId } : {}),
    tool_use_id: text(params.itemId) ?? text(params.callId) ?? text(params.approvalId) ?? 'unknown',
    ...(text(params.cwd) ? { cwd: params.cwd } : {}),
  };
  const reason = text(params.reason);
  if (method === 'item/commandExecution/requestApproval' || method === 'execCommandApproval') {
    const command = commandText(params.command) ?? commandText(item?.command) ?? '';
    const cwd = text(params.cwd) ?? text(item?.cwd);
    return {
      ...base,
      tool_name: 'Bash',
      tool_input: { command, ...(cwd ? { cwd } : {}), ...(reason ? { description: reason } : {}) },
    };
  }
  const { paths, patch } = fileChanges(method === 'applyPatchApproval' ? params.fileChanges : item?.changes);
  return {
    ...base,
    tool_name: 'apply_patch',
    tool_input: {
      command: patch,
      paths,
      ...(text(params.grantRoot) ? { grant_root: params.grantRoot } : {}),
      ...(reason ? { description: reason } : {}),
    },
  };
}

/** What the gate's reply means for the server: decide now, or leave the question to the client. */
export type ApprovalVerdict = { kind: 'accept' } | { kind: 'decline'; reason: string } | { kind: 'client' };

/**
 * The `codex` route's reply to an approval hook (`permission` style): `decision.behavior` allow or
 * deny decides; the neutral `{}` (no rule spoke, nobody on the phone) leaves it to the client's own
 * prompt; exit 2 (gateway down, bad input: the bridge's fail-closed answer) declines.
 */
export function verdictOf(reply: { exitCode: number; stdout: string; stderr: string }): ApprovalVerdict {
  if (reply.exitCode !== 0) return { kind: 'decline', reason: reply.stderr.trim() || 'refused' };
  let body: Json = {};
  try {
    body = record(JSON.parse(reply.stdout || '{}'));
  } catch {
    return { kind: 'decline', reason: 'the gateway answered something that is not JSON' };
  }
  const decision = record(record(body.hookSpecificOutput).decision);
  if (decision.behavior === 'allow') return { kind: 'accept' };
  if (decision.behavior === 'deny')
    return { kind: 'decline', reason: text(decision.message) ?? 'denied by policy' };
  return { kind: 'client' };
}

/** The JSON-RPC result that answers the server: v2 `accept`/`decline`, v1 `approved`/`denied`. */
export function approvalResult(method: ApprovalMethod, accept: boolean): Json {
  const legacy = method === 'execCommandApproval' || method === 'applyPatchApproval';
  if (legacy) return { decision: accept ? 'approved' : 'denied' };
  return { decision: accept ? 'accept' : 'decline' };
}

/** Items the gate knows as tools; messages, reasoning and plans are not posted. */
const TOOL_ITEMS = new Set(['commandExecution', 'fileChange', 'mcpToolCall', 'dynamicToolCall', 'webSearch']);

/**
 * An observe-only hook payload for a notification, or undefined for what is not posted (deltas:
 * the completed item carries the whole output; token usage, plans, diffs, resolved requests).
 */
export function notificationHook(method: string, params: Json): Json | undefined {
  const threadId = text(params.threadId);
  switch (method) {
    case 'thread/started': {
      const thread = record(params.thread);
      const id = text(thread.id) ?? threadId;
      return id
        ? { hook_event_name: method, session_id: id, ...(text(thread.cwd) ? { cwd: thread.cwd } : {}) }
        : undefined;
    }
    case 'thread/closed':
      return threadId ? { hook_event_name: method, session_id: threadId } : undefined;
    case 'turn/started':
    case 'turn/completed': {
      const turn = record(params.turn);
      if (!threadId || !text(turn.id)) return undefined;
      const failed = method === 'turn/completed' && turn.status === 'failed';
      return {
        hook_event_name: failed ? 'turn/failed' : method,
        session_id: threadId,
        turn_id: turn.id,
        ...(text(turn.status) ? { status: turn.status } : {}),
        ...(failed ? { error: text(record(turn.error).message) ?? 'turn failed' } : {}),
      };
    }
    case 'item/started':
    case 'item/completed': {
      const item = record(params.item);
      if (!threadId || !TOOL_ITEMS.has(String(item.type)) || !text(item.id)) return undefined;
      const tool = toolOf(item)!;
      const status = text(item.status);
      const bad = method === 'item/completed' && (status === 'failed' || status === 'declined');
      return {
        hook_event_name: method,
        session_id: threadId,
        ...(text(params.turnId) ? { turn_id: params.turnId } : {}),
        tool_use_id: item.id,
        tool_name: tool.tool,
        tool_input: tool.input,
        ...(status ? { status } : {}),
        ...(typeof item.exitCode === 'number' ? { exit_code: item.exitCode } : {}),
        ...(bad ? { error: `${String(item.type)} ${status}` } : {}),
      };
    }
    default:
      return undefined;
  }
}
