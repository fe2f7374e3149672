import type { Db } from '../../store/port.js';
import type { AcceptedFacts } from '../pipeline/facts.js';
import { selectRevision, upsertRevision } from '../sql.js';

/** What admission decides about a delivery's revision: go on, or drop it as older than the last one. */
export type OrderCheck =
  | { kind: 'in_order' }
  | {
      kind: 'out_of_order';
      detail: {
        resource: string;
        revision: string;
        last_revision: string;
        last_event_id: string;
        tag?: string;
        last_tag?: string;
      };
    };

interface RevisionRow {
  revision_at: number | string;
  tag: string | null;
  event_id: string;
}

/**
 * A newer event for a resource never loses to an older one delivered later: a delivery whose revision
 * is older than the newest admitted for its resource is out of order; otherwise its revision becomes
 * the newest (an equal one too: two actions stamped in the same second are both real). A delivery with
 * no revision, and a replay (a person asked for it), always go on. Runs in admission's transaction.
 */
export async function checkOrder(
  tx: Db,
  facts: AcceptedFacts,
  eventId: string,
  now: number,
): Promise<OrderCheck> {
  const r = facts.revision;
  if (!r || (facts as { replay_of?: unknown }).replay_of !== undefined) return { kind: 'in_order' };
  const at = Date.parse(r.at);
  if (!Number.isFinite(at)) return { kind: 'in_order' };
  const [last] = await tx.query<RevisionRow>(selectRevision(facts.source, r.resource));
  if (last && at < Number(last.revision_at)) {
    return {
      kind: 'out_of_order',
      detail: {
        resource: r.resource,
        revision: r.at,
        last_revision: new Date(Number(last.revision_at)).toISOString(),
        last_event_id: last.event_id,
        ...(r.tag ? { tag: r.tag } : {}),
        ...(last.tag ? { last_tag: last.tag } : {}),
      },
    };
  }
  await tx.query(
    upsertRevision({ source: facts.source, resource: r.resource, at, tag: r.tag ?? null, eventId, now }),
  );
  return { kind: 'in_order' };
}
