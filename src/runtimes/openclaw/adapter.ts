import { defineRuntime } from '../define.js';
import { jsonReply } from '../shared.js';
import { OPENCLAW_EVENTS, type ReplyStyle } from './events.js';
import { OPENCLAW_KINDS } from './kinds.js';

/** Shown on OpenClaw's approval prompt; the description carries the approval id and the reason. */
export const OPENCLAW_APPROVAL_TITLE = 'Switchboard approval required';

export const openclaw = defineRuntime<ReplyStyle>({
  kind: 'openclaw',
  adapterVersion: '1',
  events: OPENCLAW_EVENTS,
  kinds: OPENCLAW_KINDS,
  intentEvents: ['before_tool_call'],
  // The plugin forwards `{ hook_event_name, event, ctx }`: the callback's event and context objects.
  fields: {
    event: 'hook_event_name',
    sessionId: ['ctx.sessionId', 'ctx.sessionKey'],
    turnId: ['event.runId', 'ctx.runId'],
    toolCallId: 'event.toolCallId',
    agentId: 'ctx.agentId',
    tool: 'event.toolName',
    input: 'event.params',
  },
  failure: { event: 'after_tool_call', error: 'event.error' },
  replies: {
    before_tool: {
      rewrite: (v) => ({ params: v.input }),
      // timeoutBehavior deny: an unanswered prompt must not turn into a run.
      ask: (v) => ({
        requireApproval: {
          title: OPENCLAW_APPROVAL_TITLE,
          description: v.reason,
          severity: 'warning',
          timeoutBehavior: 'deny',
        },
      }),
      deny: (v) => ({ block: true, blockReason: v.reason }),
    },
  },
  // The plugin calls the route itself, so every reply is an HTTP body: a BeforeToolCallResult without
  // its callback. `{}` is "no decision".
  http: true,
  neutral: {},
  // OpenClaw fails before_tool_call closed on a timeout; unreadable input is answered the same way.
  errorReply: (message) => jsonReply({ block: true, blockReason: `switchboard: ${message}` }, { http: true }),
  // the plugin's own wait (integrations/openclaw DEFAULT_TIMEOUT_MS), below OpenClaw's 15 s
  defaultTimeoutMs: 12_000,
});
