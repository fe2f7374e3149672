import type { EventType } from './catalogue.js';
import type { EventId } from './ids.js';

/** Bumped when a field changes meaning; consumers reject a version they do not know. */
export const ENVELOPE_SCHEMA_VERSION = 1;

export type Risk = 'low' | 'high';

/**
 * The event envelope of seed 001. Every field is always present (null where it does not apply), so a
 * consumer never has to guess whether a missing field means "none" or "forgot". Raw payloads never
 * travel here: `payload_ref` points into the encrypted vault and `redacted_summary` is what may be shown.
 */
export interface Envelope {
  event_id: EventId;
  type: EventType;
  schema_version: number;
  occurred_at: string;
  tenant_id: string;
  environment: string;
  runtime: { kind: string | null; adapter_version: string | null };
  actor: { user_id: string | null; agent_id: string | null };
  execution: {
    task_id: string | null;
    session_id: string | null;
    turn_id: string | null;
    tool_call_id: string | null;
    attempt: number;
  };
  correlation_id: string;
  causation_id: string | null;
  /** Loop guard: how many automated hops led here, and how deep the automation chain is. */
  lineage: { hop_count: number; depth: number };
  policy: { revision: string | null; risk: Risk | null };
  /** `kind`: the tool's canonical kind (`shell`, `file.read`, …), on tool events where it is known. */
  subject: { tool: string | null; action: string | null; resource_ref: string | null; kind?: string };
  payload_ref: string | null;
  payload_digest: string | null;
  redacted_summary: Record<string, unknown>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? Partial<T[K]> : T[K] };

/** What a producer supplies; `build` fills ids, time and defaults. */
export type EnvelopeInput = { type: EventType } & DeepPartial<Omit<Envelope, 'type' | 'schema_version'>>;

export interface EnvelopeDefaults {
  tenant_id: string;
  environment: string;
}
