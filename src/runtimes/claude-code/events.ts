import type { EventRow } from '../define.js';

/**
 * How Claude Code lets each event be answered (reference/runtimes.md §1.5–1.6):
 * - `pre_tool`: `hookSpecificOutput.permissionDecision`;
 * - `permission`: `hookSpecificOutput.decision.behavior`;
 * - `top_block`: top-level `{"decision":"block","reason"}`;
 * - `exit2`: only exit code 2 with stderr (no JSON decision is documented);
 * - `elicitation`: `hookSpecificOutput.action`;
 * - `none`: nothing the gate says changes the outcome.
 */
export type ReplyStyle = 'pre_tool' | 'permission' | 'top_block' | 'exit2' | 'elicitation' | 'none';

const NO_TYPE = 'no dedicated event type yet; recorded as agent.runtime.unrecognized with its name';

export const CLAUDE_CODE_EVENTS: Record<string, EventRow<ReplyStyle>> = {
  SessionStart: {
    capability: 'observe_only',
    envelopeType: 'agent.session.started',
    style: 'none',
    notes: 'command hooks only (no http)',
  },
  Setup: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: `command hooks only; ${NO_TYPE}`,
  },
  UserPromptSubmit: {
    capability: 'can_block',
    envelopeType: 'agent.prompt.submitted',
    style: 'top_block',
    notes: 'block erases the prompt',
  },
  UserPromptExpansion: {
    capability: 'can_block',
    envelopeType: 'agent.prompt.submitted',
    style: 'top_block',
  },
  PreToolUse: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'pre_tool',
    notes: 'allow, deny, ask, defer (-p only), updatedInput replaces the input',
  },
  PermissionRequest: {
    capability: 'can_block',
    envelopeType: 'agent.permission.requested',
    style: 'permission',
    notes: 'decision.behavior allow|deny; exit 2 is ignored',
  },
  PermissionDenied: { capability: 'observe_only', envelopeType: 'agent.tool.denied', style: 'none' },
  PostToolUse: {
    capability: 'observe_only',
    envelopeType: 'agent.tool.completed',
    style: 'none',
    notes: 'the tool already ran',
  },
  PostToolUseFailure: { capability: 'observe_only', envelopeType: 'agent.tool.failed', style: 'none' },
  PostToolBatch: {
    capability: 'can_block',
    envelopeType: 'agent.tool.completed',
    style: 'top_block',
    notes: 'the tools already ran; block stops the next step',
  },
  Notification: { capability: 'observe_only', envelopeType: 'agent.notification.raised', style: 'none' },
  MessageDisplay: { capability: 'observe_only', envelopeType: 'agent.notification.raised', style: 'none' },
  SubagentStart: { capability: 'observe_only', envelopeType: 'agent.subagent.started', style: 'none' },
  SubagentStop: {
    capability: 'can_block',
    envelopeType: 'agent.subagent.stopped',
    style: 'top_block',
    notes: 'block keeps the subagent working',
  },
  TaskCreated: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'exit2',
    notes: `exit 2 only; ${NO_TYPE}`,
  },
  TaskCompleted: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'exit2',
    notes: `exit 2 only; ${NO_TYPE}`,
  },
  Stop: {
    capability: 'can_block',
    envelopeType: 'agent.turn.completed',
    style: 'top_block',
    notes: 'block keeps Claude working (at most 8 times)',
  },
  StopFailure: { capability: 'observe_only', envelopeType: 'agent.turn.failed', style: 'none' },
  TeammateIdle: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'exit2',
    notes: `exit 2 only; ${NO_TYPE}`,
  },
  InstructionsLoaded: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: NO_TYPE,
  },
  ConfigChange: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'top_block',
    notes: NO_TYPE,
  },
  CwdChanged: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: NO_TYPE,
  },
  DirectoryAdded: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: NO_TYPE,
  },
  FileChanged: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: NO_TYPE,
  },
  WorktreeCreate: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'exit2',
    notes: `any non-zero exit blocks; ${NO_TYPE}`,
  },
  WorktreeRemove: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: NO_TYPE,
  },
  PreCompact: {
    capability: 'can_block',
    envelopeType: 'agent.session.compacted',
    style: 'top_block',
    notes: 'fires before compaction',
  },
  PostCompact: { capability: 'observe_only', envelopeType: 'agent.session.compacted', style: 'none' },
  Elicitation: {
    capability: 'needs_user_input',
    envelopeType: 'agent.notification.raised',
    style: 'elicitation',
    notes: 'an MCP server asks the user; decline answers for them',
  },
  ElicitationResult: {
    capability: 'can_block',
    envelopeType: 'agent.notification.raised',
    style: 'elicitation',
  },
  SessionEnd: {
    capability: 'observe_only',
    envelopeType: 'agent.session.ended',
    style: 'none',
    notes: '1.5 s shared budget',
  },
};
