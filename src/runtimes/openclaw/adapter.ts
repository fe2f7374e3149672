import type { Decision, NativeReply, Normalized, RuntimeAdapter } from '../runtime.js';
import {
  type Json,
  asRecord,
  jsonReply,
  malformed,
  normalizeFacts,
  parseRaw,
  str,
  verdictFor,
} from '../shared.js';
import { OPENCLAW_CAPABILITIES } from './events.js';

const KIND = 'openclaw';
const VERSION = '1';
const INTENT_EVENTS = new Set(['before_tool_call']);
const identity = { kind: KIND, adapterVersion: VERSION, capabilities: OPENCLAW_CAPABILITIES } as const;

/** Shown on OpenClaw's approval prompt; the description carries the approval id and the reason. */
export const OPENCLAW_APPROVAL_TITLE = 'Switchboard approval required';

function normalize(raw: unknown): Normalized {
  const parsed = parseRaw(raw);
  if (!parsed.ok) return malformed(identity, parsed.problem);
  const p = parsed.value;
  const event = asRecord(p.event) ?? {};
  const ctx = asRecord(p.ctx) ?? {};
  const name = str(p.hook_event_name) ?? '';
  const failed = name === 'after_tool_call' && event.error !== undefined && event.error !== null;
  return normalizeFacts(
    identity,
    {
      event: name,
      sessionId: str(ctx.sessionId) ?? str(ctx.sessionKey),
      turnId: str(event.runId) ?? str(ctx.runId),
      toolCallId: str(event.toolCallId),
      agentId: str(ctx.agentId),
      tool: str(event.toolName),
      input: asRecord(event.params),
      ...(failed ? { type: 'agent.tool.failed' as const } : {}),
    },
    p,
    INTENT_EVENTS,
  );
}

// The plugin calls the route itself, so every reply is an HTTP body: a BeforeToolCallResult without
// its callback. `{}` is "no decision".
const reply = (body: Json) => jsonReply(body, { http: true });

function neutralReply(): NativeReply {
  return reply({});
}

function errorReply(message: string): NativeReply {
  // OpenClaw fails before_tool_call closed on a timeout; unreadable input is answered the same way.
  return reply({ block: true, blockReason: `switchboard: ${message}` });
}

function answer(n: Normalized, d: Decision | null): NativeReply {
  if (n.problem) return errorReply(n.problem);
  if (!d || n.event !== 'before_tool_call') return neutralReply();
  const v = verdictFor(d, n.intent?.input, { ask: true, defer: false, rewrite: 'replace' });
  switch (v.kind) {
    case 'allow':
      return neutralReply();
    case 'rewrite':
      return reply({ params: v.input });
    case 'ask':
      // timeoutBehavior deny: an unanswered prompt must not turn into a run.
      return reply({
        requireApproval: {
          title: OPENCLAW_APPROVAL_TITLE,
          description: v.reason,
          severity: 'warning',
          timeoutBehavior: 'deny',
        },
      });
    default:
      return reply({ block: true, blockReason: v.reason });
  }
}

export const openclaw: RuntimeAdapter = {
  kind: KIND,
  adapterVersion: VERSION,
  normalize,
  reply: answer,
  neutralReply,
  errorReply,
  capabilities: OPENCLAW_CAPABILITIES,
  // the plugin's own wait (integrations/openclaw DEFAULT_TIMEOUT_MS), below OpenClaw's 15 s
  defaultTimeoutMs: 12_000,
};
