import type { Db } from '../../store/port.js';
import * as q from '../sql.js';
import { prefix } from '../../text/index.js';

/**
 * The delivery record's status: `accepted` until admission processed it, then `processed`; `failed` lets
 * a redelivery in, and so does `refused` (stored but unbound: a redelivery once bound is accepted).
 */
export type DeliveryStatus = 'accepted' | 'processed' | 'failed' | 'refused';

export interface DeliveryRow {
  source: string;
  delivery_id: string;
  event_id: string;
  tenant_id: string;
  event_name: string | null;
  payload_ref: string;
  status: DeliveryStatus;
  accepted: number;
  received_at: number;
  processed_at: number | null;
  last_error: string | null;
}

/**
 * Records a delivery, or takes one whose admission failed over again (GitHub redeliveries reuse the id);
 * a delivery that is pending or processed stays as it is. One statement, so two replicas racing on the
 * same id cannot both win. Returns false for a duplicate.
 */
export async function claimDelivery(db: Db, d: Parameters<typeof q.claimDelivery>[0]): Promise<boolean> {
  const rows = await db.query(q.claimDelivery(d));
  return rows.length > 0;
}

/** Stores an unbound delivery as `refused`; false when the id is already stored and not retakeable. */
export async function refuseDelivery(db: Db, d: Parameters<typeof q.claimDelivery>[0]): Promise<boolean> {
  const rows = await db.query(q.claimDelivery(d, 'refused'));
  return rows.length > 0;
}

export async function getDelivery(
  db: Db,
  source: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  const rows = await db.query<DeliveryRow>(q.selectDelivery(source, deliveryId));
  return rows[0];
}

/** Every source's delivery with this id (replay names a delivery id; sources could share one). */
export async function findDeliveries(db: Db, deliveryId: string): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(q.selectDeliveriesById(deliveryId));
}

/** Marks the delivery processed, but only while it still names this event (a replay may have moved it on). */
export async function markDelivery(
  db: Db,
  eventId: string,
  status: DeliveryStatus,
  now: number,
  error?: string,
): Promise<void> {
  await db.query(
    q.markDelivery(
      eventId,
      status,
      status === 'processed' ? now : null,
      error === undefined ? null : prefix(error, 500),
    ),
  );
}

/** Points a delivery at a new accepted event (replay): admission then processes it as new work. */
export async function reassignDelivery(
  db: Db,
  source: string,
  deliveryId: string,
  eventId: string,
  now: number,
) {
  await db.query(q.reassignDelivery(source, deliveryId, eventId, now));
}

/** Forgets processed deliveries older than the retention: their payloads are gone too. */
export async function purgeDeliveries(db: Db, before: number): Promise<number> {
  const rows = await db.query(q.purgeDeliveries(before));
  return rows.length;
}
