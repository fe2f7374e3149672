import type { Envelope } from './envelope.js';

/** A CloudEvents 1.0 structured-mode event (JSON format). */
export interface CloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  datacontenttype: 'application/json';
  dataschema?: string;
  subject?: string;
  data: Envelope;
  // Extension attributes: lower-case alphanumerics only (CloudEvents 1.0 §"Attribute Naming Convention").
  correlationid: string;
  causationid?: string;
  tenantid: string;
}

/**
 * Projects an envelope onto CloudEvents 1.0 for outside consumers. The envelope stays whole in `data`;
 * the attributes only repeat what routers need. `source` names the runtime or integration that produced
 * the event under this gateway's URI, so two gateways never produce the same (source, id) pair.
 */
export function toCloudEvent(envelope: Envelope, gatewayUri = 'urn:switchboard'): CloudEvent {
  const origin = envelope.runtime.kind ?? envelope.type.split('.')[0]!;
  const out: CloudEvent = {
    specversion: '1.0',
    id: envelope.event_id,
    source: `${gatewayUri}/${envelope.tenant_id}/${origin}`,
    type: `dev.switchboard.${envelope.type}`,
    time: envelope.occurred_at,
    datacontenttype: 'application/json',
    dataschema: `https://switchboard.dev/schemas/envelope-v${envelope.schema_version}.json`,
    data: envelope,
    correlationid: envelope.correlation_id,
    tenantid: envelope.tenant_id,
  };
  if (envelope.execution.task_id) out.subject = envelope.execution.task_id;
  if (envelope.causation_id) out.causationid = envelope.causation_id;
  return out;
}
