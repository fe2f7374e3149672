import { defineRuntime, exitTwo } from '../define.js';
import { GEMINI_EVENTS, type ReplyStyle } from './events.js';
import { GEMINI_KINDS } from './kinds.js';

export const geminiCli = defineRuntime<ReplyStyle>({
  kind: 'gemini-cli',
  adapterVersion: '1',
  events: GEMINI_EVENTS,
  kinds: GEMINI_KINDS,
  intentEvents: ['BeforeTool'],
  fields: {
    event: 'hook_event_name',
    sessionId: 'session_id',
    tool: 'tool_name',
    input: 'tool_input',
    cwd: 'cwd',
  },
  failure: { event: 'AfterTool', error: 'tool_response.error' },
  replies: {
    // No native ask or defer; tool_input merges, so a removed field is refused in verdictFor.
    before_tool: {
      allow: () => ({ decision: 'allow' }),
      rewrite: (v) => ({ decision: 'allow', hookSpecificOutput: { tool_input: v.input } }),
      merges: true,
      deny: (v) => ({ decision: 'deny', reason: v.reason }),
    },
    top: { deny: (v) => ({ decision: 'deny', reason: v.reason }) },
  },
  // Gemini parses stdout as JSON and shows anything else as a message, so even "nothing" is `{}`.
  neutral: {},
  // Exit 2 blocks the tool with stderr as the reason; any other non-zero only warns.
  errorReply: exitTwo,
  // reference §5: 60 000 ms
  defaultTimeoutMs: 60_000,
});
