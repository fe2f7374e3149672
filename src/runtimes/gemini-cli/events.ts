import type { EventRow } from '../define.js';

/** `before_tool` carries the gate's decision; `top` is `{"decision":"deny","reason"}`. */
export type ReplyStyle = 'before_tool' | 'top' | 'none';

const NO_TYPE = 'no dedicated event type yet; recorded as agent.runtime.unrecognized with its name';

// reference/runtimes.md §5 and Gemini CLI docs/hooks/reference.md.
export const GEMINI_EVENTS: Record<string, EventRow<ReplyStyle>> = {
  BeforeTool: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'before_tool',
    notes: 'allow, deny; hookSpecificOutput.tool_input merges over the arguments',
  },
  AfterTool: {
    capability: 'observe_only',
    envelopeType: 'agent.tool.completed',
    style: 'none',
    notes: 'the tool already ran (deny would only hide its output)',
  },
  BeforeAgent: {
    capability: 'can_block',
    envelopeType: 'agent.prompt.submitted',
    style: 'top',
    notes: 'deny discards the prompt',
  },
  AfterAgent: {
    capability: 'can_block',
    envelopeType: 'agent.turn.completed',
    style: 'top',
    notes: 'deny forces a retry with the reason as the prompt',
  },
  BeforeModel: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'top',
    notes: NO_TYPE,
  },
  BeforeToolSelection: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'none',
    notes: `filters tools, takes no decision; ${NO_TYPE}`,
  },
  AfterModel: {
    capability: 'can_block',
    envelopeType: 'agent.runtime.unrecognized',
    style: 'top',
    notes: `fires per streamed chunk; ${NO_TYPE}`,
  },
  SessionStart: { capability: 'observe_only', envelopeType: 'agent.session.started', style: 'none' },
  SessionEnd: { capability: 'observe_only', envelopeType: 'agent.session.ended', style: 'none' },
  Notification: { capability: 'observe_only', envelopeType: 'agent.notification.raised', style: 'none' },
  PreCompress: {
    capability: 'observe_only',
    envelopeType: 'agent.session.compacted',
    style: 'none',
    notes: 'fires before compression',
  },
};
