import type { EventRow } from '../define.js';

/** `pre_tool`: a `{action, message | args}` directive; every other event ignores what the gate says. */
export type ReplyStyle = 'pre_tool';

const NO_TYPE = 'no dedicated event type yet; recorded as agent.runtime.unrecognized with its name';

// reference/runtimes.md §3.1–3.2: shell hooks get the plugin events; only pre_tool_call takes a directive we use.
export const HERMES_EVENTS: Record<string, EventRow<ReplyStyle>> = {
  pre_tool_call: {
    capability: 'can_block',
    envelopeType: 'agent.tool.requested',
    style: 'pre_tool',
    notes: 'block, approve (escalate to the human gate), modify (shallow merge)',
  },
  post_tool_call: { capability: 'observe_only', envelopeType: 'agent.tool.completed' },
  pre_llm_call: {
    capability: 'observe_only',
    envelopeType: 'agent.prompt.submitted',
    notes: 'can only add context to the user message',
  },
  post_llm_call: { capability: 'observe_only', envelopeType: 'agent.runtime.unrecognized', notes: NO_TYPE },
  on_session_start: { capability: 'observe_only', envelopeType: 'agent.session.started' },
  on_session_end: { capability: 'observe_only', envelopeType: 'agent.session.ended' },
  on_session_finalize: { capability: 'observe_only', envelopeType: 'agent.session.ended' },
  on_session_reset: { capability: 'observe_only', envelopeType: 'agent.session.started' },
  subagent_start: { capability: 'observe_only', envelopeType: 'agent.subagent.started' },
  subagent_stop: { capability: 'observe_only', envelopeType: 'agent.subagent.stopped' },
  agent_loop_stopped: { capability: 'observe_only', envelopeType: 'agent.turn.completed' },
  pre_approval_request: { capability: 'observe_only', envelopeType: 'agent.permission.requested' },
  post_approval_response: {
    capability: 'observe_only',
    envelopeType: 'agent.runtime.unrecognized',
    notes: NO_TYPE,
  },
  pre_verify: {
    capability: 'unknown',
    envelopeType: 'agent.runtime.unrecognized',
    notes: `a verify gate whose effect is not documented; ${NO_TYPE}`,
  },
};
