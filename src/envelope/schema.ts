import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { EVENT_TYPES } from './catalogue.js';
import type { Envelope } from './envelope.js';

const nullableString = { type: ['string', 'null'] } as const;

/** JSON Schema (2020-12 subset Ajv understands by default) of the envelope. Published in docs/envelope.md. */
export const ENVELOPE_JSON_SCHEMA = {
  $id: 'https://switchboard.dev/schemas/envelope-v1.json',
  title: 'Switchboard event envelope',
  type: 'object',
  additionalProperties: false,
  required: [
    'event_id',
    'type',
    'schema_version',
    'occurred_at',
    'tenant_id',
    'environment',
    'runtime',
    'actor',
    'execution',
    'correlation_id',
    'causation_id',
    'lineage',
    'policy',
    'subject',
    'payload_ref',
    'payload_digest',
    'redacted_summary',
  ],
  properties: {
    event_id: { type: 'string', pattern: '^evt_[0-9A-HJKMNP-TV-Z]{26}$' },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    schema_version: { type: 'integer', const: 1 },
    occurred_at: { type: 'string', format: 'date-time' },
    tenant_id: { type: 'string', minLength: 1, maxLength: 200 },
    environment: { type: 'string', minLength: 1, maxLength: 100 },
    runtime: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'adapter_version'],
      properties: { kind: nullableString, adapter_version: nullableString },
    },
    actor: {
      type: 'object',
      additionalProperties: false,
      required: ['user_id', 'agent_id'],
      properties: { user_id: nullableString, agent_id: nullableString },
    },
    execution: {
      type: 'object',
      additionalProperties: false,
      required: ['task_id', 'session_id', 'turn_id', 'tool_call_id', 'attempt'],
      properties: {
        task_id: nullableString,
        session_id: nullableString,
        turn_id: nullableString,
        tool_call_id: nullableString,
        attempt: { type: 'integer', minimum: 1 },
      },
    },
    correlation_id: { type: 'string', minLength: 1 },
    causation_id: nullableString,
    lineage: {
      type: 'object',
      additionalProperties: false,
      required: ['hop_count', 'depth'],
      properties: { hop_count: { type: 'integer', minimum: 0 }, depth: { type: 'integer', minimum: 0 } },
    },
    policy: {
      type: 'object',
      additionalProperties: false,
      required: ['revision', 'risk'],
      properties: { revision: nullableString, risk: { enum: ['low', 'high', null] } },
    },
    subject: {
      type: 'object',
      additionalProperties: false,
      required: ['tool', 'action', 'resource_ref'],
      properties: {
        tool: nullableString,
        action: nullableString,
        resource_ref: nullableString,
        kind: { type: 'string', minLength: 1, maxLength: 40 },
      },
    },
    payload_ref: nullableString,
    payload_digest: { type: ['string', 'null'], pattern: '^sha256:[0-9a-f]{64}$' },
    redacted_summary: { type: 'object' },
  },
} as const;

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;
/**
 * Compiled with the first check, not at import (~25 ms of CPU): a process that loads the envelope
 * module and never checks an envelope, such as most CLI commands, does not pay for it. The
 * command-hook bridge avoids even loading it (`runtimes/shared.ts` imports `json.ts` directly).
 */
let validator: ValidateFunction<Envelope> | undefined;
function validate(value: unknown): value is Envelope {
  validator ??= addFormats(new Ajv({ allErrors: true, strict: true })).compile<Envelope>(
    ENVELOPE_JSON_SCHEMA,
  );
  return validator(value);
}

export interface SchemaProblem {
  path: string;
  message: string;
}

/** Checks an envelope against the JSON Schema; returns the problems, empty when valid. */
export function checkEnvelope(value: unknown): SchemaProblem[] {
  if (validate(value)) return [];
  return (validator?.errors ?? []).map((e) => ({
    path: e.instancePath || '/',
    message: e.message ?? 'invalid',
  }));
}

export function isEnvelope(value: unknown): value is Envelope {
  return validate(value);
}
