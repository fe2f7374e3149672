import { z } from 'zod';
import { type EventId, newId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { requireRole } from '../../kernel/auth.js';
import { readJson } from '../../kernel/body.js';
import type { App, Services } from '../../kernel/module.js';
import { type DeliveryRow, findDeliveries, getDelivery, reassignDelivery } from './deliveries.js';
import { prefix } from '../../text/index.js';

export const replayBody = z.strictObject({
  /** Needed only when two sources received a delivery with the same id. */
  source: z.string().min(1).max(100).optional(),
});

/**
 * `POST /v1/ingress/deliveries/:id/replay` (admin): admission runs again, under the config serving now,
 * for a stored delivery. It appends a new accepted event for the same sealed payload, so everything it
 * leads to is new work: a new run and a new task, never an old approval or capability.
 */
export function replayRoute(app: App, services: Services): void {
  app.post('/v1/ingress/deliveries/:id/replay', requireRole(services.keys, 'admin'), async (c) => {
    const hasBody =
      (c.req.header('content-length') ?? '0') !== '0' || c.req.header('content-type') !== undefined;
    const body = hasBody ? await readJson(c, replayBody, services.config.server.body_limit_bytes) : {};
    const id = c.req.param('id');
    const delivery = await pickDelivery(services, id, body.source);
    const old = await services.log.get(delivery.event_id);
    if (!old) throw new AppError('not_found', `the event of delivery ${id} is not in the log`);
    const payloadRef = old.envelope.payload_ref;
    if (!payloadRef || !(await services.vault.get(payloadRef))) {
      throw new AppError(
        'expired',
        `the payload of delivery ${id} is past its retention and cannot be replayed`,
      );
    }
    const now = services.now();
    const eventId = newId('event', now) as EventId;
    const principal = c.get('principal');
    await services.db.tx(async (tx) => {
      await services.emit(
        {
          type: 'integration.webhook.accepted',
          event_id: eventId,
          tenant_id: old.envelope.tenant_id,
          payload_ref: payloadRef,
          payload_digest: old.envelope.payload_digest,
          redacted_summary: { ...old.envelope.redacted_summary, replay_of: old.envelope.event_id },
          subject: old.envelope.subject,
          lineage: old.envelope.lineage,
          actor: { user_id: principal.name },
        },
        tx,
      );
      await reassignDelivery(tx, delivery.source, delivery.delivery_id, eventId, now);
    });
    return c.json({ id: eventId, status: 'accepted', replay_of: old.envelope.event_id }, 202);
  });
}

async function pickDelivery(
  services: Services,
  id: string,
  source: string | undefined,
): Promise<DeliveryRow> {
  if (source !== undefined) {
    const row = await getDelivery(services.db, source, id);
    if (!row)
      throw new AppError('not_found', `source ${source} has no delivery ${JSON.stringify(prefix(id, 100))}`);
    return row;
  }
  const rows = await findDeliveries(services.db, id);
  if (rows.length === 0)
    throw new AppError('not_found', `no delivery ${JSON.stringify(prefix(id, 100))} is stored`);
  if (rows.length > 1)
    throw new AppError(
      'conflict',
      `sources ${rows.map((r) => r.source).join(', ')} each have this delivery id; name the source`,
    );
  return rows[0]!;
}
