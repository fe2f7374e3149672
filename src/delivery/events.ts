import type { EventType } from '../envelope/catalogue.js';
import type { EnvelopeInput } from '../envelope/index.js';
import type { SendResult } from '../egress/index.js';
import type { Outcome } from './retry.js';
import { prefix } from '../text/index.js';

/**
 * What one attempt becomes in the log: the event type and a secret-free payload. Pure, so the relay
 * only appends it. Response bodies are cut to a short excerpt here because the event log is not the
 * place for a receiver's (possibly sensitive) answer; the full capped body belongs in the vault.
 * Pinned by `events.test.ts`.
 */

/** Enough of a receiver's answer to see what went wrong at a glance. */
export const BODY_EXCERPT_CHARS = 200;

export interface AttemptRecord {
  type: Extract<EventType, `integration.delivery.${string}`>;
  summary: string;
  data: {
    outcome: Outcome['kind'];
    attempt: number;
    sent: boolean;
    status?: number;
    error?: string;
    reason?: string;
    next_at?: number;
    throttle?: boolean;
    disable?: boolean;
    blocked_reason?: string;
    duration_ms: number;
    body_excerpt?: string;
  };
}

export function attemptRecord(result: SendResult, outcome: Outcome, attempt: number): AttemptRecord {
  const data: AttemptRecord['data'] = {
    outcome: outcome.kind,
    attempt,
    sent: result.sent,
    duration_ms: result.durationMs,
  };
  if (result.status !== undefined) data.status = result.status;
  if (result.error !== undefined) data.error = result.error;
  // Only failures keep an excerpt: a 2xx body of a chat API echoes the message, which is already
  // in the log in redacted form.
  if (result.body && outcome.kind !== 'ok') data.body_excerpt = prefix(result.body, BODY_EXCERPT_CHARS);
  if (result.blocked) data.blocked_reason = result.blocked.reason;

  switch (outcome.kind) {
    case 'ok':
      return { type: 'integration.delivery.succeeded', summary: `delivered (${result.status})`, data };
    case 'retry':
      data.next_at = outcome.at;
      if (outcome.throttle) data.throttle = true;
      return {
        type: 'integration.delivery.failed',
        summary: `attempt ${attempt} failed: ${outcome.error}`,
        data,
      };
    case 'unknown':
      if (outcome.at !== undefined) data.next_at = outcome.at;
      return {
        type: 'integration.delivery.unknown',
        summary: `outcome unknown after ${outcome.error}`,
        data,
      };
    case 'dead':
      data.reason = outcome.reason;
      if (outcome.disable) data.disable = true;
      if (result.blocked) {
        return {
          type: 'integration.delivery.blocked',
          summary: `blocked (${result.blocked.reason}): ${result.blocked.detail}`,
          data,
        };
      }
      return { type: 'integration.delivery.dead', summary: `dead: ${outcome.reason}`, data };
  }
}

/** A fact about one delivery row: caused by the event it delivers, in that event's correlation. */
export function deliveryEvent(
  type: EventType,
  r: { id: string; event_id: string; correlation_id: string; destination: string },
  channel: string,
  summary: Record<string, unknown>,
): EnvelopeInput {
  return {
    type,
    causation_id: r.event_id,
    correlation_id: r.correlation_id,
    subject: { resource_ref: r.id },
    redacted_summary: { delivery_id: r.id, destination: r.destination, channel, ...summary },
  };
}
