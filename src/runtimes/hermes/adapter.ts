import { defineRuntime, exitTwo } from '../define.js';
import { HERMES_EVENTS, type ReplyStyle } from './events.js';
import { HERMES_KINDS } from './kinds.js';

/** Hermes reads at most this much of stderr as a block message (reference/runtimes.md §3.2). */
const STDERR_MESSAGE_MAX = 400;

export const hermes = defineRuntime<ReplyStyle>({
  kind: 'hermes',
  adapterVersion: '1',
  events: HERMES_EVENTS,
  kinds: HERMES_KINDS,
  intentEvents: ['pre_tool_call'],
  fields: {
    event: 'hook_event_name',
    sessionId: ['session_id', 'extra.session_id'],
    turnId: 'extra.turn_id',
    toolCallId: 'extra.tool_call_id',
    tool: 'tool_name',
    input: 'tool_input',
    cwd: 'cwd',
  },
  failure: { event: 'post_tool_call', error: ['extra.error_type', 'extra.error_message'], text: true },
  replies: {
    // Hermes's own human gate is its native ask; `modify` merges, so a removed field cannot be expressed.
    pre_tool: {
      ask: (v) => ({ action: 'approve', message: v.reason }),
      rewrite: (v) => ({ action: 'modify', args: v.input }),
      merges: true,
      deny: (v) => ({ action: 'block', message: v.reason }),
    },
  },
  // `{}` is Hermes's documented no-op.
  neutral: {},
  // Exit 2 blocks a pre_tool_call; on other events it is only a warning.
  errorReply: (message) => exitTwo(message, STDERR_MESSAGE_MAX),
  // reference §3.2: shell hooks default to 60 s (capped at 300 s)
  defaultTimeoutMs: 60_000,
});
