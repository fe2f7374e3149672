import type { Envelope, EnvelopeDefaults, EnvelopeInput } from './envelope.js';
import { ENVELOPE_SCHEMA_VERSION } from './envelope.js';
import { newId, type EventId } from './ids.js';

/**
 * Completes an envelope from what a producer knows. A new intent gets a new `event_id`; a retry keeps
 * the id it was given and bumps `execution.attempt`. Without a correlation id the event starts its own
 * chain, correlated to itself.
 */
export function buildEnvelope(input: EnvelopeInput, defaults: EnvelopeDefaults, now = new Date()): Envelope {
  const eventId = (input.event_id ?? newId('event', now.getTime())) as EventId;
  // Keys in RFC 8785's order, here and in each nested object: the canonical form then sorts nothing
  // but `redacted_summary` (digest.ts). Readers never depend on the order.
  return {
    actor: { agent_id: input.actor?.agent_id ?? null, user_id: input.actor?.user_id ?? null },
    causation_id: input.causation_id ?? null,
    correlation_id: input.correlation_id ?? eventId,
    environment: input.environment ?? defaults.environment,
    event_id: eventId,
    execution: {
      attempt: input.execution?.attempt ?? 1,
      session_id: input.execution?.session_id ?? null,
      task_id: input.execution?.task_id ?? null,
      tool_call_id: input.execution?.tool_call_id ?? null,
      turn_id: input.execution?.turn_id ?? null,
    },
    lineage: { depth: input.lineage?.depth ?? 0, hop_count: input.lineage?.hop_count ?? 0 },
    occurred_at: input.occurred_at ?? now.toISOString(),
    payload_digest: input.payload_digest ?? null,
    payload_ref: input.payload_ref ?? null,
    policy: { revision: input.policy?.revision ?? null, risk: input.policy?.risk ?? null },
    redacted_summary: input.redacted_summary ?? {},
    runtime: { adapter_version: input.runtime?.adapter_version ?? null, kind: input.runtime?.kind ?? null },
    schema_version: ENVELOPE_SCHEMA_VERSION,
    subject: {
      action: input.subject?.action ?? null,
      ...(input.subject?.kind ? { kind: input.subject.kind } : {}),
      resource_ref: input.subject?.resource_ref ?? null,
      tool: input.subject?.tool ?? null,
    },
    tenant_id: input.tenant_id ?? defaults.tenant_id,
    type: input.type,
  };
}

/** The envelope of an event caused by `cause`: same correlation, one more hop, same tenant and task. */
export function causedBy(cause: Envelope, input: EnvelopeInput): EnvelopeInput {
  return {
    tenant_id: cause.tenant_id,
    environment: cause.environment,
    correlation_id: cause.correlation_id,
    causation_id: cause.event_id,
    ...input,
    execution: { ...cause.execution, attempt: 1, ...input.execution },
    lineage: { hop_count: cause.lineage.hop_count + 1, depth: cause.lineage.depth, ...input.lineage },
  };
}
