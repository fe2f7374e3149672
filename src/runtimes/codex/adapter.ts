import { defineRuntime, exitTwo, type FieldMap } from '../define.js';
import { hookSpecific } from '../shared.js';
import { CODEX_EVENTS, type ReplyStyle } from './events.js';
import { CODEX_KINDS } from './kinds.js';
import { APPROVAL_METHODS } from './app-server.js';

const HOOK_FIELDS: FieldMap = {
  event: 'hook_event_name',
  sessionId: 'session_id',
  turnId: 'turn_id',
  toolCallId: 'tool_use_id',
  agentId: 'agent_id',
  tool: 'tool_name',
  input: 'tool_input',
  cwd: 'cwd',
};

/** The legacy `notify` program's payload: kebab-case ids, no tool. */
const NOTIFY_FIELDS: FieldMap = { event: 'type', sessionId: 'thread-id', turnId: 'turn-id', cwd: 'cwd' };

export const codex = defineRuntime<ReplyStyle>({
  kind: 'codex',
  adapterVersion: '1',
  events: CODEX_EVENTS,
  kinds: CODEX_KINDS,
  intentEvents: ['PreToolUse', 'PermissionRequest', ...APPROVAL_METHODS],
  // An app-server tool item that ended failed or declined (the bridge sets `error`).
  failure: { event: 'item/completed', error: 'error', text: true },
  // A hook gets its JSON on stdin; the `notify` program gets it as the last argv item.
  payload: (raw, ctx) => ctx?.argv?.at(-1) ?? raw,
  fields: (p) =>
    p.hook_event_name === undefined && typeof p.type === 'string' ? NOTIFY_FIELDS : HOOK_FIELDS,
  replies: {
    // Neither ask nor defer exists here: both become a deny that names the approval or the deferral.
    pre_tool: {
      rewrite: (v, event) => hookSpecific(event, { permissionDecision: 'allow', updatedInput: v.input }),
      deny: (v, event) =>
        hookSpecific(event, { permissionDecision: 'deny', permissionDecisionReason: v.reason }),
    },
    // updatedInput on PermissionRequest "currently fails closed" in Codex's schema: no rewrite here.
    permission: {
      allow: (_, event) => hookSpecific(event, { decision: { behavior: 'allow' } }),
      ask: 'neutral',
      deny: (v, event) => hookSpecific(event, { decision: { behavior: 'deny', message: v.reason } }),
    },
    top_block: { deny: (v) => ({ decision: 'block', reason: v.reason }) },
  },
  // Codex rejects unknown fields and unsupported decisions by failing the hook, which runs the tool.
  // `{}` is the one allow it accepts as-is (NVIDIA's Codex hooks server answers exactly that).
  neutral: {},
  // Exit 2 blocks only with a non-empty stderr; an empty one counts as a failed hook.
  errorReply: exitTwo,
  // reference §2.3: `timeout` defaults to 600 s
  defaultTimeoutMs: 600_000,
});
