import { type Envelope, type EnvelopeInput, causedBy } from '../envelope/index.js';
import type { GateDecision, GateIntent } from '../gate/port.js';
import type { Channel } from './config.js';
import type { TouchCaller } from './port.js';
import type { TouchError, TouchResponse } from './protocol.js';
import type { Tool } from './registry.js';

/**
 * What reach says to the gate and the log, as pure builders: the intent a touch is, the two events
 * (`agent.touch.requested`, `agent.touch.completed`) and the refusals a decision turns into. Params
 * and results are sealed in the vault by the caller; events carry refs, digests and counts only.
 */

/** The touch as a gate intent: rules see `tool`, `input`, `action == "reach.sql"`, `resource == "reach:write"`. */
const REACH_KINDS: Partial<Record<Tool['kind'], GateIntent['kind']>> = {
  http: 'reach.http',
  sql: 'reach.sql',
  command: 'reach.command',
};

export function intentOf(tool: Tool, params: Record<string, unknown>, c: TouchCaller): GateIntent {
  return {
    tool: tool.name,
    input: params,
    action: `reach.${tool.kind}`,
    resource: `reach:${tool.permission}`,
    // The canonical kind, so one rule covers every caller (`kind == "reach.sql"`); module and memory
    // tools have none of their own.
    kind: REACH_KINDS[tool.kind] ?? 'other',
    ...(tool.untrusted ? { untrusted: true } : {}),
    event_type: 'agent.touch.requested',
    ...(c.task_id ? { task_id: c.task_id } : {}),
    ...(c.session_id ? { session_id: c.session_id } : {}),
  };
}

/**
 * What the vault holds for a touch's params: the intent as the gate seals its own (`tool`, `input`,
 * `action`, `resource`, `kind`, the untrusted mark), because the gate's `agent.tool.requested` points
 * at this payload and a shadow run reads the intent back from it (gate/service/shadow.ts). Pinned by
 * guard.test.ts, "seals the intent as the gate reads it back".
 */
export function sealedIntent(i: GateIntent): Record<string, unknown> {
  return {
    tool: i.tool,
    action: i.action ?? null,
    resource: i.resource ?? null,
    input: i.input,
    kind: i.kind ?? 'other',
    ...(i.untrusted ? { untrusted: true } : {}),
  };
}

/**
 * What the vault holds for a one-commit read (docs/reach.md, "One commit per read touch"): its intent
 * as `sealedIntent` seals it, and the response as delivered (redacted) under `response`, in one
 * record both events point at — one seal and one vault row per touch instead of two. A shadow run
 * reads `tool` and `input` from it as from any sealed intent; GET reads `response` (`storedResponse`).
 */
export function sealedTouch(
  intent: Record<string, unknown>,
  response: TouchResponse,
): Record<string, unknown> {
  return { ...intent, response };
}

/** The TouchResponse a touch's `response_ref` holds: the record itself, or a one-commit read's `response`. */
export function storedResponse(stored: unknown): TouchResponse {
  const v = stored as Record<string, unknown>;
  return ('input' in v && 'response' in v ? v.response : v) as TouchResponse;
}

export function requestedEvent(
  requestId: string,
  tool: Tool,
  params: Record<string, unknown>,
  digest: string,
  channel: Channel,
  c: TouchCaller,
  sealed: { ref: string; digest: string },
): EnvelopeInput {
  return {
    type: 'agent.touch.requested',
    actor: { agent_id: c.principal.name },
    execution: { task_id: c.task_id, session_id: c.session_id ?? null },
    subject: { tool: tool.name, action: `reach.${tool.kind}`, resource_ref: `reach:${tool.permission}` },
    payload_ref: sealed.ref,
    payload_digest: sealed.digest,
    redacted_summary: {
      request_id: requestId,
      caller: c.principal.name,
      tool: tool.name,
      kind: tool.kind,
      permission: tool.permission,
      channel,
      params_digest: digest,
      param_keys: Object.keys(params).slice(0, 50),
    },
  };
}

export type Cause = Envelope | { task_id: string | null; session_id: string | null };

export function completedEvent(
  cause: Cause,
  requestId: string,
  tool: string,
  kind: string | null,
  c: TouchCaller,
  r: TouchResponse,
  sealed?: { ref: string; digest: string },
): EnvelopeInput {
  const e: EnvelopeInput = {
    type: 'agent.touch.completed',
    actor: { agent_id: c.principal.name },
    subject: { tool, action: kind ? `reach.${kind}` : null, resource_ref: null },
    ...(sealed ? { payload_ref: sealed.ref, payload_digest: sealed.digest } : {}),
    redacted_summary: {
      request_id: requestId,
      caller: c.principal.name,
      tool,
      outcome: r.ok ? 'ok' : r.error!.code,
      cost_ms: r.cost_ms,
      ...(r.error?.details?.reason_code ? { reason_code: r.error.details.reason_code } : {}),
      ...(r.error?.details?.approval_id ? { approval_id: r.error.details.approval_id } : {}),
      ...(r.context
        ? {
            mode: r.context.mode,
            items: r.context.total_items ?? null,
            omitted: r.context.omitted_items ?? 0,
            tokens_before: r.context.tokens_before,
            tokens_after: r.context.tokens_after,
            redacted: r.context.redacted,
          }
        : {}),
    },
  };
  if ('event_id' in cause) return causedBy(cause, e);
  return { ...e, execution: { task_id: cause.task_id, session_id: cause.session_id } };
}

export function denial(d: GateDecision, tool: Pick<Tool, 'name'>): TouchError {
  return {
    code: 'DENIED',
    message: d.reason ?? `the policy refused ${tool.name} (${d.reason_code})`,
    details: { reason_code: d.reason_code, matched_rules: d.matched_rules.map((r) => r.id) },
  };
}

export function approvalRequired(approvalId: string, reasonCode: string, requestId: string): TouchError {
  return {
    code: 'APPROVAL_REQUIRED',
    message: `a person must approve this call (${approvalId}); call again with request_id ${requestId} once it is approved`,
    details: { approval_id: approvalId, reason_code: reasonCode },
  };
}
