import { defineRuntime, exitTwo } from '../define.js';
import { hookSpecific, type Verdict } from '../shared.js';
import { CLAUDE_CODE_EVENTS, type ReplyStyle } from './events.js';
import { CLAUDE_CODE_KINDS } from './kinds.js';

const preTool = (v: Verdict, event: string) =>
  hookSpecific(event, { permissionDecisionReason: v.reason, permissionDecision: v.kind });

export const claudeCode = defineRuntime<ReplyStyle>({
  kind: 'claude-code',
  adapterVersion: '1',
  events: CLAUDE_CODE_EVENTS,
  kinds: CLAUDE_CODE_KINDS,
  intentEvents: ['PreToolUse', 'PermissionRequest'],
  fields: {
    event: 'hook_event_name',
    sessionId: 'session_id',
    turnId: 'prompt_id',
    toolCallId: 'tool_use_id',
    agentId: 'agent_id',
    tool: 'tool_name',
    input: 'tool_input',
    cwd: 'cwd',
  },
  replies: {
    pre_tool: {
      allow: preTool,
      ask: preTool,
      defer: preTool,
      rewrite: (v, event) =>
        hookSpecific(event, {
          permissionDecisionReason: v.reason,
          permissionDecision: 'allow',
          updatedInput: v.input,
        }),
      deny: preTool,
    },
    permission: {
      allow: (_, event) => hookSpecific(event, { decision: { behavior: 'allow' } }),
      // Answering nothing leaves Claude Code's own permission dialog up: that is its native ask.
      ask: 'neutral',
      rewrite: (v, event) => hookSpecific(event, { decision: { behavior: 'allow', updatedInput: v.input } }),
      deny: (v, event) => hookSpecific(event, { decision: { behavior: 'deny', message: v.reason } }),
    },
    top_block: { deny: (v) => ({ decision: 'block', reason: v.reason }) },
    exit2: { deny: 'exit2' },
    elicitation: {
      ask: 'neutral',
      deny: (_, event) => hookSpecific(event, { action: 'decline' }),
    },
  },
  // Every reply is also the HTTP hook's body: a 2xx with JSON is read exactly like stdout (§1.3).
  http: true,
  neutral: null,
  // Exit 2 blocks where blocking is possible, so unreadable input fails closed on PreToolUse.
  // There is no HTTP body: the route answers non-2xx, which Claude Code treats as a non-blocking error.
  errorReply: exitTwo,
  // reference §1.7: 600 s for command and http hooks
  defaultTimeoutMs: 600_000,
});
