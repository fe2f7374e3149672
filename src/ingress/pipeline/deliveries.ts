import type { Db } from '../../store/port.js';

/** The delivery record's status: `accepted` until admission processed it, then `processed`; `failed` lets a redelivery in. */
export type DeliveryStatus = 'accepted' | 'processed' | 'failed';

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
export async function claimDelivery(
  db: Db,
  d: {
    source: string;
    deliveryId: string;
    eventId: string;
    tenantId: string;
    eventName: string | null;
    payloadRef: string;
    now: number;
  },
): Promise<boolean> {
  const rows = await db.query({
    text: `INSERT INTO ingress_deliveries (source, delivery_id, event_id, tenant_id, event_name, payload_ref, status, accepted, received_at)
           VALUES ($1, $2, $3, $4, $5, $6, 'accepted', 1, $7)
           ON CONFLICT (source, delivery_id) DO UPDATE SET
             event_id = excluded.event_id, tenant_id = excluded.tenant_id, event_name = excluded.event_name,
             payload_ref = excluded.payload_ref, status = 'accepted', accepted = ingress_deliveries.accepted + 1,
             received_at = excluded.received_at, processed_at = NULL, last_error = NULL
           WHERE ingress_deliveries.status = 'failed'
           RETURNING accepted`,
    values: [d.source, d.deliveryId, d.eventId, d.tenantId, d.eventName, d.payloadRef, d.now],
  });
  return rows.length > 0;
}

export async function getDelivery(
  db: Db,
  source: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  const rows = await db.query<DeliveryRow>({
    text: 'SELECT * FROM ingress_deliveries WHERE source = $1 AND delivery_id = $2',
    values: [source, deliveryId],
  });
  return rows[0];
}

/** Every source's delivery with this id (replay names a delivery id; sources could share one). */
export async function findDeliveries(db: Db, deliveryId: string): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>({
    text: 'SELECT * FROM ingress_deliveries WHERE delivery_id = $1 ORDER BY source',
    values: [deliveryId],
  });
}

/** Marks the delivery processed, but only while it still names this event (a replay may have moved it on). */
export async function markDelivery(
  db: Db,
  eventId: string,
  status: DeliveryStatus,
  now: number,
  error?: string,
): Promise<void> {
  await db.query({
    text: `UPDATE ingress_deliveries SET status = $1, processed_at = $2, last_error = $3 WHERE event_id = $4`,
    values: [status, status === 'processed' ? now : null, error?.slice(0, 500) ?? null, eventId],
  });
}

/** Points a delivery at a new accepted event (replay): admission then processes it as new work. */
export async function reassignDelivery(
  db: Db,
  source: string,
  deliveryId: string,
  eventId: string,
  now: number,
) {
  await db.query({
    text: `UPDATE ingress_deliveries SET event_id = $1, status = 'accepted', accepted = accepted + 1,
             received_at = $2, processed_at = NULL, last_error = NULL
           WHERE source = $3 AND delivery_id = $4`,
    values: [eventId, now, source, deliveryId],
  });
}

/** Forgets processed deliveries older than the retention: their payloads are gone too. */
export async function purgeDeliveries(db: Db, before: number): Promise<number> {
  const rows = await db.query({
    text: `DELETE FROM ingress_deliveries WHERE status = 'processed' AND received_at < $1 RETURNING delivery_id`,
    values: [before],
  });
  return rows.length;
}
