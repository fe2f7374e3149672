import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';
import { asRecord, jsonReply, malformed, normalizeFacts, parseRaw, str, verdictFor } from '../shared.js';
import { HERMES_CAPABILITIES } from './events.js';

const KIND = 'hermes';
const VERSION = '1';
const INTENT_EVENTS = new Set(['pre_tool_call']);
const identity = { kind: KIND, adapterVersion: VERSION, capabilities: HERMES_CAPABILITIES } as const;

/** Hermes reads at most this much of stderr as a block message (reference/runtimes.md §3.2). */
const STDERR_MESSAGE_MAX = 400;

function normalize(raw: unknown): Normalized {
  const parsed = parseRaw(raw);
  if (!parsed.ok) return malformed(identity, parsed.problem);
  const p = parsed.value;
  const extra = asRecord(p.extra) ?? {};
  const event = str(p.hook_event_name) ?? '';
  const failed =
    event === 'post_tool_call' && (str(extra.error_type) ?? str(extra.error_message)) !== undefined;
  return normalizeFacts(
    identity,
    {
      event,
      sessionId: str(p.session_id) ?? str(extra.session_id),
      turnId: str(extra.turn_id),
      toolCallId: str(extra.tool_call_id),
      tool: str(p.tool_name),
      input: asRecord(p.tool_input),
      cwd: str(p.cwd),
      ...(failed ? { type: 'agent.tool.failed' as const } : {}),
    },
    p,
    INTENT_EVENTS,
  );
}

/** `{}` is Hermes's documented no-op. */
function neutralReply(): NativeReply {
  return jsonReply({});
}

function errorReply(message: string): NativeReply {
  // Exit 2 blocks a pre_tool_call; on other events it is only a warning.
  return { exitCode: 2, stdout: '', stderr: `switchboard: ${message}`.slice(0, STDERR_MESSAGE_MAX) };
}

function answer(n: Normalized, d: Decision | null): NativeReply {
  if (n.problem) return errorReply(n.problem);
  if (!d || n.event !== 'pre_tool_call') return neutralReply();
  // Hermes's own human gate is its native ask; `modify` merges, so a removed field cannot be expressed.
  const v = verdictFor(d, n.intent?.input, { ask: true, defer: false, rewrite: 'merge' });
  switch (v.kind) {
    case 'allow':
      return neutralReply();
    case 'ask':
      return jsonReply({ action: 'approve', message: v.reason });
    case 'rewrite':
      return jsonReply({ action: 'modify', args: v.input });
    default:
      return jsonReply({ action: 'block', message: v.reason });
  }
}

export const hermes: RuntimeAdapter = {
  kind: KIND,
  adapterVersion: VERSION,
  normalize,
  reply: answer,
  neutralReply,
  errorReply,
  capabilities: HERMES_CAPABILITIES,
  // reference §3.2: shell hooks default to 60 s (capped at 300 s)
  defaultTimeoutMs: 60_000,
};
