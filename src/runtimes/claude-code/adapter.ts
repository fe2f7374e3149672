import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';
import {
  type Json,
  asRecord,
  jsonReply,
  malformed,
  normalizeFacts,
  parseRaw,
  specOf,
  str,
  verdictFor,
} from '../shared.js';
import { CLAUDE_CODE_CAPABILITIES, CLAUDE_CODE_EVENTS } from './events.js';

const KIND = 'claude-code';
const VERSION = '1';
const INTENT_EVENTS = new Set(['PreToolUse', 'PermissionRequest']);
const identity = { kind: KIND, adapterVersion: VERSION, capabilities: CLAUDE_CODE_CAPABILITIES } as const;

function normalize(raw: unknown): Normalized {
  const parsed = parseRaw(raw);
  if (!parsed.ok) return malformed(identity, parsed.problem);
  const p = parsed.value;
  return normalizeFacts(
    identity,
    {
      event: str(p.hook_event_name) ?? '',
      sessionId: str(p.session_id),
      turnId: str(p.prompt_id),
      toolCallId: str(p.tool_use_id),
      agentId: str(p.agent_id),
      tool: str(p.tool_name),
      input: asRecord(p.tool_input),
      cwd: str(p.cwd),
    },
    p,
    INTENT_EVENTS,
  );
}

// Every reply is also the HTTP hook's body: a 2xx with JSON is read exactly like stdout (§1.3).
const reply = (body: Json | null, extra: { exitCode?: number; stderr?: string } = {}) =>
  jsonReply(body, { ...extra, http: true });

function neutralReply(): NativeReply {
  return reply(null);
}

function errorReply(message: string): NativeReply {
  // Exit 2 blocks where blocking is possible, so unreadable input fails closed on PreToolUse.
  // There is no HTTP body: the route answers non-2xx, which Claude Code treats as a non-blocking error.
  return { exitCode: 2, stdout: '', stderr: `switchboard: ${message}` };
}

function answer(n: Normalized, d: Decision | null): NativeReply {
  if (n.problem) return errorReply(n.problem);
  const row = specOf(CLAUDE_CODE_EVENTS, n.event);
  if (!d || !row) return neutralReply();
  const hookEventName = n.event;
  const original = n.intent?.input;
  switch (row.style) {
    case 'pre_tool': {
      const v = verdictFor(d, original, { ask: true, defer: true, rewrite: 'replace' });
      const out: Json = { hookEventName, permissionDecisionReason: v.reason };
      if (v.kind === 'rewrite') Object.assign(out, { permissionDecision: 'allow', updatedInput: v.input });
      else out.permissionDecision = v.kind;
      return reply({ hookSpecificOutput: out });
    }
    case 'permission': {
      const v = verdictFor(d, original, { ask: true, defer: false, rewrite: 'replace' });
      // Answering nothing leaves Claude Code's own permission dialog up: that is its native ask.
      if (v.kind === 'ask') return neutralReply();
      let decision: Json;
      if (v.kind === 'allow') decision = { behavior: 'allow' };
      else if (v.kind === 'rewrite') decision = { behavior: 'allow', updatedInput: v.input };
      else decision = { behavior: 'deny', message: v.reason };
      return reply({ hookSpecificOutput: { hookEventName, decision } });
    }
    case 'top_block': {
      const v = verdictFor(d, original, { ask: false, defer: false, rewrite: 'none' });
      return v.kind === 'allow' ? neutralReply() : reply({ decision: 'block', reason: v.reason });
    }
    case 'exit2': {
      const v = verdictFor(d, original, { ask: false, defer: false, rewrite: 'none' });
      return v.kind === 'allow' ? neutralReply() : reply(null, { exitCode: 2, stderr: v.reason });
    }
    case 'elicitation': {
      const v = verdictFor(d, original, { ask: true, defer: false, rewrite: 'none' });
      if (v.kind === 'allow' || v.kind === 'ask') return neutralReply();
      return reply({ hookSpecificOutput: { hookEventName, action: 'decline' } });
    }
    default:
      return neutralReply();
  }
}

export const claudeCode: RuntimeAdapter = {
  kind: KIND,
  adapterVersion: VERSION,
  normalize,
  reply: answer,
  neutralReply,
  errorReply,
  capabilities: CLAUDE_CODE_CAPABILITIES,
  // reference §1.7: 600 s for command and http hooks
  defaultTimeoutMs: 600_000,
};
