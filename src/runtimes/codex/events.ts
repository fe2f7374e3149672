import type { EventRow } from '../define.js';

/** `pre_tool` and `permission` carry the gate's decision; `top_block` is `{"decision":"block","reason"}`. */
export type ReplyStyle = 'pre_tool' | 'permission' | 'top_block' | 'none';

/** The `notify` program's only payload type; it arrives as the last argv item, and nothing reads a reply. */
export const CODEX_NOTIFY_EVENT = 'agent-turn-complete';

// reference/runtimes.md §2.2–2.3 (codex-rs/hooks).
export const CODEX_EVENTS: Record<string, EventRow<ReplyStyle>> = {
  PreToolUse: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'pre_tool',
    notes: 'deny, or allow with updatedInput; plain allow and ask fail the hook (and the tool runs)',
  },
  PermissionRequest: {
    capability: 'can_block',
    envelopeType: 'agent.permission.requested',
    style: 'permission',
    notes: 'decision.behavior allow|deny; no answer falls back to the normal approval flow',
  },
  PostToolUse: { capability: 'observe_only', envelopeType: 'agent.tool.completed', style: 'none' },
  PreCompact: { capability: 'observe_only', envelopeType: 'agent.session.compacted', style: 'none' },
  PostCompact: { capability: 'observe_only', envelopeType: 'agent.session.compacted', style: 'none' },
  SessionStart: { capability: 'observe_only', envelopeType: 'agent.session.started', style: 'none' },
  UserPromptSubmit: { capability: 'can_block', envelopeType: 'agent.prompt.submitted', style: 'top_block' },
  SubagentStart: { capability: 'observe_only', envelopeType: 'agent.subagent.started', style: 'none' },
  SubagentStop: {
    capability: 'unknown',
    envelopeType: 'agent.subagent.stopped',
    style: 'none',
    notes: 'reply shape undocumented',
  },
  Stop: {
    capability: 'can_block',
    envelopeType: 'agent.turn.completed',
    style: 'top_block',
    notes: 'block keeps Codex working',
  },
  SessionEnd: {
    capability: 'observe_only',
    envelopeType: 'agent.session.ended',
    style: 'none',
    notes: 'listed in the docs only',
  },
  Interrupt: {
    capability: 'observe_only',
    envelopeType: 'agent.turn.failed',
    style: 'none',
    notes: 'listed in the docs only',
  },
  // App Server (`switchboard codex-app-server`, src/runtimes/codex/app-server.ts): the approval requests
  // are decided like PermissionRequest; notifications are posted as observe-only events.
  'item/commandExecution/requestApproval': {
    capability: 'can_block',
    envelopeType: 'agent.permission.requested',
    style: 'permission',
    notes:
      'app-server request: allow → accept, deny → decline; no rule: the client (or the phone when away) decides',
  },
  'item/fileChange/requestApproval': {
    capability: 'can_block',
    envelopeType: 'agent.permission.requested',
    style: 'permission',
    notes: 'app-server request, as above; the diff comes from the item/started of that item',
  },
  execCommandApproval: {
    capability: 'can_block',
    envelopeType: 'agent.permission.requested',
    style: 'permission',
    notes: 'legacy v1 app-server request: approved / denied',
  },
  applyPatchApproval: {
    capability: 'can_block',
    envelopeType: 'agent.permission.requested',
    style: 'permission',
    notes: 'legacy v1 app-server request: approved / denied',
  },
  'thread/started': { capability: 'observe_only', envelopeType: 'agent.session.started', style: 'none' },
  'thread/closed': { capability: 'observe_only', envelopeType: 'agent.session.ended', style: 'none' },
  'turn/started': { capability: 'observe_only', envelopeType: 'agent.runtime.observed', style: 'none' },
  'turn/completed': {
    capability: 'observe_only',
    envelopeType: 'agent.turn.completed',
    style: 'none',
    notes: 'status completed or interrupted',
  },
  'turn/failed': {
    capability: 'observe_only',
    envelopeType: 'agent.turn.failed',
    style: 'none',
    notes: 'turn/completed with status failed (the bridge names it)',
  },
  'item/started': {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.observed',
    style: 'none',
    notes: 'tool items only (commandExecution, fileChange, mcpToolCall, dynamicToolCall, webSearch)',
  },
  'item/completed': {
    capability: 'observe_only',
    envelopeType: 'agent.tool.completed',
    style: 'none',
    notes: 'tool items only; status failed or declined → agent.tool.failed; deltas fold into it',
  },
  [CODEX_NOTIFY_EVENT]: {
    capability: 'observe_only',
    envelopeType: 'agent.turn.completed',
    style: 'none',
    notes: 'legacy notify program: JSON is the last argv item, fire-and-forget',
  },
};
