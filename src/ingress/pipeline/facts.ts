import { markerDepth, markerHops } from '../admission/loop.js';
import { isRecord } from '../sources/common/request.js';
import { prefix } from '../../text/index.js';
import type { Revision } from '../source.js';

/**
 * The small, trusted facts an accepted event carries in `redacted_summary`: names and ids chosen by
 * the sender's platform, never free text an attacker writes (titles, bodies, comments stay in the vault).
 */
export interface AcceptedFacts {
  source: string;
  source_type: string;
  event: string | null;
  delivery_id: string;
  binding: Record<string, string>;
  action?: string;
  /** Set when the route stored a decoded copy (Feishu's encrypted bodies) beside the raw bytes. */
  parsed_ref?: string;
  /** The `sources.<name>.tenants` entry that chose the tenant: which binding key and id matched. */
  bound_by?: { key: string; id: string };
  /** The resource and its revision (ISO 8601), for the source kinds that name one (admission/order.ts). */
  revision?: { resource: string; at: string; tag?: string };
}

/** Actions are identifiers (`opened`, `synchronize`); anything else is not a fact worth trusting. */
const ACTION = /^[a-z_]{1,40}$/;

export function acceptedFacts(input: {
  source: string;
  sourceType: string;
  eventName: string | null;
  deliveryId: string;
  binding: Record<string, string>;
  payload: unknown;
  revision?: Revision | undefined;
}): AcceptedFacts {
  const facts: AcceptedFacts = {
    source: input.source,
    source_type: input.sourceType,
    event: input.eventName === null ? null : prefix(input.eventName, 100),
    delivery_id: prefix(input.deliveryId, 200),
    binding: input.binding,
  };
  const action = isRecord(input.payload) ? input.payload.action : undefined;
  if (typeof action === 'string' && ACTION.test(action)) facts.action = action;
  const r = input.revision;
  if (r)
    facts.revision = {
      resource: r.resource,
      at: new Date(r.at).toISOString(),
      ...(r.tag ? { tag: r.tag } : {}),
    };
  return facts;
}

/** The automation depth a delivery arrives with: the marker an agent's post carried, else 0. */
export const arrivalDepth = (payload: unknown): number => markerDepth(payload);

/** The hop count a delivery arrives with: the marker's `hops=`, else 0 (a root). */
export const arrivalHops = (payload: unknown): number => markerHops(payload);

/** Reads the facts back from an event (admission, replay); undefined when the event is not one of ours. */
export function readFacts(summary: Record<string, unknown>): AcceptedFacts | undefined {
  const { source, source_type, delivery_id } = summary;
  if (typeof source !== 'string' || typeof source_type !== 'string' || typeof delivery_id !== 'string')
    return undefined;
  return summary as unknown as AcceptedFacts;
}
