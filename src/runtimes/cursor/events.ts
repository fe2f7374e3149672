import type { EventRow } from '../define.js';

/**
 * Cursor answers each event in its own shape (reference/runtimes.md §6):
 * - `permission`: `{permission, userMessage, agentMessage}` (shell, MCP), with a native `ask`;
 * - `pre_tool`: `{decision, reason, updated_input}`;
 * - `read_file`: `{permission, user_message}`;
 * - `prompt`: `{continue, user_message}`.
 */
export type ReplyStyle = 'permission' | 'pre_tool' | 'read_file' | 'prompt' | 'none';

const FROM_TYPINGS = 'shape from third-party typings (cursor-hooks), not the official page';

export const CURSOR_EVENTS: Record<string, EventRow<ReplyStyle>> = {
  sessionStart: { capability: 'observe_only', envelopeType: 'agent.session.started', style: 'none' },
  sessionEnd: { capability: 'observe_only', envelopeType: 'agent.session.ended', style: 'none' },
  preToolUse: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'pre_tool',
    notes: `allow, deny, updated_input; ${FROM_TYPINGS}`,
  },
  postToolUse: { capability: 'observe_only', envelopeType: 'agent.tool.completed', style: 'none' },
  postToolUseFailure: { capability: 'observe_only', envelopeType: 'agent.tool.failed', style: 'none' },
  subagentStart: { capability: 'observe_only', envelopeType: 'agent.subagent.started', style: 'none' },
  subagentStop: {
    capability: 'observe_only',
    envelopeType: 'agent.subagent.stopped',
    style: 'none',
    notes: 'can only add a follow-up message',
  },
  beforeShellExecution: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'permission',
    notes: `allow, deny, ask; ${FROM_TYPINGS}`,
  },
  afterShellExecution: { capability: 'observe_only', envelopeType: 'agent.tool.completed', style: 'none' },
  beforeMCPExecution: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'permission',
    notes: `allow, deny, ask; ${FROM_TYPINGS}`,
  },
  afterMCPExecution: { capability: 'observe_only', envelopeType: 'agent.tool.completed', style: 'none' },
  beforeReadFile: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'read_file',
    notes: `allow, deny; ${FROM_TYPINGS}`,
  },
  afterFileEdit: { capability: 'observe_only', envelopeType: 'agent.tool.completed', style: 'none' },
  beforeSubmitPrompt: {
    capability: 'can_block',
    envelopeType: 'agent.prompt.submitted',
    style: 'prompt',
    notes: 'continue:false stops the prompt',
  },
  preCompact: {
    capability: 'observe_only',
    envelopeType: 'agent.session.compacted',
    style: 'none',
    notes: 'fires before compaction',
  },
  stop: {
    capability: 'observe_only',
    envelopeType: 'agent.turn.completed',
    style: 'none',
    notes: 'can only add a follow-up message',
  },
  afterAgentResponse: { capability: 'observe_only', envelopeType: 'agent.turn.completed', style: 'none' },
  afterAgentThought: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: 'no dedicated event type yet',
  },
  beforeTabFileRead: {
    capability: 'unknown',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: 'Tab completions; reply shape undocumented',
  },
  afterTabFileEdit: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: 'Tab completions; no dedicated event type yet',
  },
};
