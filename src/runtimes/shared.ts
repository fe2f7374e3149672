import { basename } from 'node:path';
// Straight from json.ts, not the envelope barrel: the command-hook bundle (dist/hook.mjs) then leaves
// out the JSON Schema validator and its Ajv, which the bridge never uses.
import type { EnvelopeInput, EventType } from '../envelope/index.js';
import { checkJsonValue, readJsonText } from '../envelope/json.js';
import type { Classified } from '../gate/kinds.js';
import type { CapabilityMatrix, Decision, NativeReply, Normalized, RuntimeKind } from './runtime.js';

/** Helpers every adapter shares: reading untrusted input, building the envelope, wording a decision. */

export type Json = Record<string, unknown>;

export function asRecord(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export type Parsed = { ok: true; value: Json } | { ok: false; problem: string };

/**
 * Accepts the stdin text, its bytes, or an already parsed body; only a JSON object is a hook input.
 * What the log could not hash (a lone surrogate, nesting past 64) is a problem like bad JSON: the
 * runtime gets its native error, with the catalogue code in the words (envelope/json.ts).
 */
export function parseRaw(raw: unknown): Parsed {
  const read =
    raw instanceof Uint8Array
      ? readJsonText(new TextDecoder().decode(raw))
      : typeof raw === 'string'
        ? readJsonText(raw)
        : checkJsonValue(raw);
  if (!read.ok) {
    return {
      ok: false,
      problem:
        read.code === 'invalid_json'
          ? 'hook input is not valid JSON'
          : `hook input is refused (${read.code}): ${read.message}`,
    };
  }
  const record = asRecord(read.value);
  return record ? { ok: true, value: record } : { ok: false, problem: 'hook input is not a JSON object' };
}

/** What an adapter reads out of one native payload; everything but `event` may be missing. */
export interface Facts {
  event: string;
  sessionId?: string;
  turnId?: string;
  toolCallId?: string;
  agentId?: string;
  tool?: string;
  input?: Json;
  cwd?: string;
  /** A more precise type than the matrix gives (a post-tool event that reports an error → `agent.tool.failed`). */
  type?: EventType;
  /** The tool's canonical kind and args, when there is a tool. */
  classified?: Classified;
}

export interface AdapterIdentity {
  kind: RuntimeKind;
  adapterVersion: string;
  capabilities: CapabilityMatrix;
}

export function specOf<T>(matrix: Record<string, T>, event: string): T | undefined {
  // hasOwn: an event named `constructor` or `__proto__` must not find Object.prototype.
  return Object.hasOwn(matrix, event) ? matrix[event] : undefined;
}

/**
 * Turns facts into the normalized form. `intentEvents` are the events where the gate decides; an
 * event the matrix does not know is kept as `agent.runtime.unrecognized` with its top-level keys.
 */
export function normalizeFacts(
  id: AdapterIdentity,
  facts: Facts,
  raw: Json,
  intentEvents: ReadonlySet<string>,
): Normalized {
  const spec = specOf(id.capabilities, facts.event);
  const summary: Json = { event: facts.event };
  if (facts.tool) summary.tool = facts.tool;
  if (facts.cwd) summary.cwd = basename(facts.cwd);
  if (!spec) summary.keys = Object.keys(raw).sort().slice(0, UNRECOGNIZED_KEYS_KEPT);
  const envelope: EnvelopeInput = {
    type: spec ? (facts.type ?? spec.envelopeType) : 'agent.runtime.unrecognized',
    runtime: { kind: id.kind, adapter_version: id.adapterVersion },
    execution: {
      session_id: facts.sessionId ?? null,
      turn_id: facts.turnId ?? null,
      tool_call_id: facts.toolCallId ?? null,
    },
    subject: { tool: facts.tool ?? null, ...(facts.classified ? { kind: facts.classified.kind } : {}) },
    redacted_summary: summary,
  };
  if (facts.agentId) envelope.actor = { agent_id: facts.agentId };
  const normalized: Normalized = {
    event: facts.event,
    envelopes: [envelope],
    blocking:
      spec !== undefined && (spec.capability === 'can_block' || spec.capability === 'needs_user_input'),
  };
  if (spec && intentEvents.has(facts.event)) {
    normalized.intent = { tool: facts.tool ?? '', input: facts.input ?? {} };
    normalized.classified = facts.classified ?? { kind: 'other', args: {} };
  }
  if (facts.sessionId) normalized.sessionId = facts.sessionId;
  return normalized;
}

/** Reads `path` in `p`: a numeric step indexes an array, any other step a JSON object. */
export function at(p: Json, path: string): unknown {
  let value: unknown = p;
  for (const step of path.split('.')) {
    if (/^\d+$/.test(step)) value = Array.isArray(value) ? value[Number(step)] : undefined;
    else value = asRecord(value)?.[step];
  }
  return value;
}

/** Enough to tell unknown payloads apart in the log; the raw body itself goes to the vault. */
export const UNRECOGNIZED_KEYS_KEPT = 20;

/** The normalized form of input that is not a JSON object: recorded, and answered with the native error. */
export function malformed(id: AdapterIdentity, problem: string): Normalized {
  return {
    event: '',
    envelopes: [
      {
        type: 'agent.runtime.unrecognized',
        runtime: { kind: id.kind, adapter_version: id.adapterVersion },
        redacted_summary: { problem },
      },
    ],
    blocking: false,
    problem,
  };
}

export function jsonReply(
  body: Json | null,
  options: { exitCode?: number; stderr?: string; http?: boolean } = {},
) {
  const reply: NativeReply = {
    exitCode: options.exitCode ?? 0,
    stdout: body ? JSON.stringify(body) : '',
    stderr: options.stderr ?? '',
  };
  if (options.http) reply.httpBody = body ?? {};
  return reply;
}

/** One line a person or an agent can act on: what happened, the stable code, and what to do next. */
export function explain(d: Decision): string {
  const why = d.reason ? `${d.reason} [${d.reason_code}]` : d.reason_code;
  switch (d.decision) {
    case 'require_approval':
      return `Switchboard: approval ${d.approval_id ?? '(no id)'} is required (${why}). Retry this call once it is approved.`;
    case 'defer':
      return d.retry_after
        ? `Switchboard: deferred (${why}). Retry this call after ${d.retry_after}.`
        : `Switchboard: deferred (${why}). Retry this call later.`;
    case 'modify':
      return `Switchboard: input rewritten by policy (${why}).`;
    case 'allow':
      return `Switchboard: allowed (${why}).`;
    default:
      return `Switchboard: denied (${why}).`;
  }
}

/** How a runtime can carry each decision; what it cannot carry becomes a deny that says why. */
export interface ReplyAbilities {
  /** The runtime can ask its user natively. */
  ask: boolean;
  /** The runtime can park the call and resume it later (Claude Code `defer`). */
  defer: boolean;
  /** How the runtime applies new input: replacing it, merging over it, or not at all. */
  rewrite: 'replace' | 'merge' | 'none';
}

export type Verdict =
  | { kind: 'allow'; reason: string }
  /** No opinion: the runtime goes on as if no hook ran (its own permission dialog still applies). */
  | { kind: 'pass'; reason: string }
  | { kind: 'deny'; reason: string }
  | { kind: 'ask'; reason: string }
  | { kind: 'defer'; reason: string }
  | { kind: 'rewrite'; reason: string; input: Json };

export function verdictFor(d: Decision, original: Json | undefined, can: ReplyAbilities): Verdict {
  const reason = explain(d);
  switch (d.decision) {
    case 'allow':
      // Read-only work that went on with no policy loaded: say nothing rather than an explicit allow
      // that would skip the runtime's own dialog (docs/policy.md "No policy loaded").
      if (d.constraints?.['policy_unavailable'] === true) return { kind: 'pass', reason };
      return { kind: 'allow', reason };
    case 'require_approval':
      return { kind: can.ask ? 'ask' : 'deny', reason };
    case 'defer':
      return { kind: can.defer ? 'defer' : 'deny', reason };
    case 'modify': {
      const input = asRecord(d.input);
      if (!input)
        return { kind: 'deny', reason: `${reason} The rewritten input is missing, so the call is refused.` };
      if (can.rewrite === 'none') {
        return {
          kind: 'deny',
          reason: `${reason} This runtime cannot rewrite tool input, so the call is refused.`,
        };
      }
      // A merge cannot delete a field: refusing is safer than running with a field policy removed.
      const removed = can.rewrite === 'merge' ? removedKeys(original ?? {}, input) : [];
      if (removed.length > 0) {
        return {
          kind: 'deny',
          reason: `${reason} This runtime merges input and cannot remove ${removed.join(', ')}, so the call is refused.`,
        };
      }
      return { kind: 'rewrite', reason, input };
    }
    default:
      return { kind: 'deny', reason };
  }
}

export function removedKeys(original: Json, next: Json): string[] {
  return Object.keys(original).filter((key) => !Object.hasOwn(next, key));
}

/** Claude Code's `hookSpecificOutput` (which Codex copies): the event name first, then the answer. */
export function hookSpecific(hookEventName: string, answer: Json): Json {
  return { hookSpecificOutput: { hookEventName, ...answer } };
}
