import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';
import {
  asRecord,
  jsonReply,
  malformed,
  normalizeFacts,
  parseRaw,
  specOf,
  str,
  verdictFor,
} from '../shared.js';
import { GEMINI_CAPABILITIES, GEMINI_EVENTS } from './events.js';

const KIND = 'gemini-cli';
const VERSION = '1';
const INTENT_EVENTS = new Set(['BeforeTool']);
const identity = { kind: KIND, adapterVersion: VERSION, capabilities: GEMINI_CAPABILITIES } as const;

function normalize(raw: unknown): Normalized {
  const parsed = parseRaw(raw);
  if (!parsed.ok) return malformed(identity, parsed.problem);
  const p = parsed.value;
  const event = str(p.hook_event_name) ?? '';
  const response = asRecord(p.tool_response);
  const failed = event === 'AfterTool' && response?.error !== undefined && response.error !== null;
  return normalizeFacts(
    identity,
    {
      event,
      sessionId: str(p.session_id),
      tool: str(p.tool_name),
      input: asRecord(p.tool_input),
      cwd: str(p.cwd),
      ...(failed ? { type: 'agent.tool.failed' as const } : {}),
    },
    p,
    INTENT_EVENTS,
  );
}

/** Gemini parses stdout as JSON and shows anything else as a message, so even "nothing" is `{}`. */
function neutralReply(): NativeReply {
  return jsonReply({});
}

function errorReply(message: string): NativeReply {
  // Exit 2 blocks the tool with stderr as the reason; any other non-zero only warns.
  return { exitCode: 2, stdout: '', stderr: `switchboard: ${message}` };
}

function answer(n: Normalized, d: Decision | null): NativeReply {
  if (n.problem) return errorReply(n.problem);
  const row = specOf(GEMINI_EVENTS, n.event);
  if (!d || !row) return neutralReply();
  switch (row.style) {
    case 'before_tool': {
      // No native ask or defer; tool_input merges, so a removed field is refused in verdictFor.
      const v = verdictFor(d, n.intent?.input, { ask: false, defer: false, rewrite: 'merge' });
      if (v.kind === 'allow') return jsonReply({ decision: 'allow' });
      if (v.kind === 'rewrite')
        return jsonReply({ decision: 'allow', hookSpecificOutput: { tool_input: v.input } });
      return jsonReply({ decision: 'deny', reason: v.reason });
    }
    case 'top': {
      const v = verdictFor(d, n.intent?.input, { ask: false, defer: false, rewrite: 'none' });
      return v.kind === 'allow' ? neutralReply() : jsonReply({ decision: 'deny', reason: v.reason });
    }
    default:
      return neutralReply();
  }
}

export const geminiCli: RuntimeAdapter = {
  kind: KIND,
  adapterVersion: VERSION,
  normalize,
  reply: answer,
  neutralReply,
  errorReply,
  capabilities: GEMINI_CAPABILITIES,
  // reference §5: 60 000 ms
  defaultTimeoutMs: 60_000,
};
