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
import { CODEX_CAPABILITIES, CODEX_EVENTS } from './events.js';

const KIND = 'codex';
const VERSION = '1';
const INTENT_EVENTS = new Set(['PreToolUse', 'PermissionRequest']);
const identity = { kind: KIND, adapterVersion: VERSION, capabilities: CODEX_CAPABILITIES } as const;

/** A hook gets its JSON on stdin; the `notify` program gets it as the last argv item. */
function normalize(raw: unknown, ctx?: { argv?: string[] }): Normalized {
  const last = ctx?.argv && ctx.argv.length > 0 ? ctx.argv[ctx.argv.length - 1] : undefined;
  const parsed = parseRaw(last ?? raw);
  if (!parsed.ok) return malformed(identity, parsed.problem);
  const p = parsed.value;
  if (p.hook_event_name === undefined && typeof p.type === 'string') {
    return normalizeFacts(
      identity,
      { event: p.type, sessionId: str(p['thread-id']), turnId: str(p['turn-id']), cwd: str(p.cwd) },
      p,
      INTENT_EVENTS,
    );
  }
  return normalizeFacts(
    identity,
    {
      event: str(p.hook_event_name) ?? '',
      sessionId: str(p.session_id),
      turnId: str(p.turn_id),
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

// Codex rejects unknown fields and unsupported decisions by failing the hook, which runs the tool.
// `{}` is the one allow it accepts as-is (NVIDIA's Codex hooks server answers exactly that).
function neutralReply(): NativeReply {
  return jsonReply({});
}

function errorReply(message: string): NativeReply {
  // Exit 2 blocks only with a non-empty stderr; an empty one counts as a failed hook.
  return { exitCode: 2, stdout: '', stderr: `switchboard: ${message}` };
}

function answer(n: Normalized, d: Decision | null): NativeReply {
  if (n.problem) return errorReply(n.problem);
  const row = specOf(CODEX_EVENTS, n.event);
  if (!d || !row) return neutralReply();
  const hookEventName = n.event;
  switch (row.style) {
    case 'pre_tool': {
      // Neither ask nor defer exists here: both become a deny that names the approval or the deferral.
      const v = verdictFor(d, n.intent?.input, { ask: false, defer: false, rewrite: 'replace' });
      if (v.kind === 'allow') return neutralReply();
      const out: Json =
        v.kind === 'rewrite'
          ? { hookEventName, permissionDecision: 'allow', updatedInput: v.input }
          : { hookEventName, permissionDecision: 'deny', permissionDecisionReason: v.reason };
      return jsonReply({ hookSpecificOutput: out });
    }
    case 'permission': {
      // updatedInput on PermissionRequest "currently fails closed" in Codex's schema: no rewrite here.
      const v = verdictFor(d, n.intent?.input, { ask: true, defer: false, rewrite: 'none' });
      if (v.kind === 'ask') return neutralReply();
      const decision: Json =
        v.kind === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: v.reason };
      return jsonReply({ hookSpecificOutput: { hookEventName, decision } });
    }
    case 'top_block': {
      const v = verdictFor(d, n.intent?.input, { ask: false, defer: false, rewrite: 'none' });
      return v.kind === 'allow' ? neutralReply() : jsonReply({ decision: 'block', reason: v.reason });
    }
    default:
      return neutralReply();
  }
}

export const codex: RuntimeAdapter = {
  kind: KIND,
  adapterVersion: VERSION,
  normalize,
  reply: answer,
  neutralReply,
  errorReply,
  capabilities: CODEX_CAPABILITIES,
  // reference §2.3: `timeout` defaults to 600 s
  defaultTimeoutMs: 600_000,
};
