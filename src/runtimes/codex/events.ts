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
  [CODEX_NOTIFY_EVENT]: {
    capability: 'observe_only',
    envelopeType: 'agent.turn.completed',
    style: 'none',
    notes: 'legacy notify program: JSON is the last argv item, fire-and-forget',
  },
};
