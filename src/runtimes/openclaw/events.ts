import type { EventRow } from '../define.js';

/** `before_tool`: a `BeforeToolCallResult` (block, params, requireApproval); the observers get `{}`. */
export type ReplyStyle = 'before_tool';

/**
 * OpenClaw hooks are in-process plugin callbacks (reference/runtimes.md §4.1); the Switchboard plugin in
 * `integrations/openclaw/` forwards them as `{ hook_event_name, event, ctx }`. Only `before_tool_call`
 * waits for an answer; the plugin sends the observers without waiting.
 */
export const OPENCLAW_EVENTS: Record<string, EventRow<ReplyStyle>> = {
  before_tool_call: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'before_tool',
    notes: 'block, params (rewrite), requireApproval (native ask); a timeout fails closed',
  },
  after_tool_call: { capability: 'observe_only', envelopeType: 'agent.tool.completed' },
  session_start: { capability: 'observe_only', envelopeType: 'agent.session.started' },
  session_end: { capability: 'observe_only', envelopeType: 'agent.session.ended' },
  agent_end: { capability: 'observe_only', envelopeType: 'agent.turn.completed' },
  before_compaction: { capability: 'observe_only', envelopeType: 'agent.session.compacted' },
  after_compaction: { capability: 'observe_only', envelopeType: 'agent.session.compacted' },
  subagent_spawned: { capability: 'observe_only', envelopeType: 'agent.subagent.started' },
  subagent_ended: { capability: 'observe_only', envelopeType: 'agent.subagent.stopped' },
  message_received: { capability: 'observe_only', envelopeType: 'agent.prompt.submitted' },
};
