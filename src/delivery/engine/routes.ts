import { z } from 'zod';
import { AppError } from '../../errors/index.js';
import { requireRole } from '../../kernel/auth.js';
import { readJson } from '../../kernel/body.js';
import type { App, Services } from '../../kernel/module.js';
import { type DeliveryService, MAX_LIST } from './service.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './sql.js';

/**
 * Admin API: `GET /v1/deliveries` (the DLQ and the reconciliation queue are `?status=dead` and
 * `?status=reconcile`), `POST /v1/deliveries/replay`, and channel health: `GET /v1/deliveries/channels`,
 * `POST /v1/deliveries/channels/{name}/restore` (a revoked credential, engine/revoked.ts).
 */

const DELIVERY_ID = /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/;
const DESTINATION = /^[a-z0-9][a-z0-9_-]*$/;

const time = z.union([z.iso.datetime({ offset: true }), z.number().int().min(0)]);

export const replayBodySchema = z
  .strictObject({
    ids: z.array(z.string().regex(DELIVERY_ID, 'a delivery id (dlv_…)')).min(1).max(1000).optional(),
    destination: z.string().regex(DESTINATION, 'a channel name').optional(),
    from: time.optional(),
    to: time.optional(),
  })
  .refine((b) => b.ids || b.destination || b.from !== undefined || b.to !== undefined, {
    message:
      'name what to replay: ids, destination, or a from/to range (replaying everything is never implicit)',
  });

const toMs = (t: string | number): number => (typeof t === 'number' ? t : Date.parse(t));

export function deliveryRoutes(app: App, s: Services, service: () => DeliveryService): void {
  app.get('/v1/deliveries', requireRole(s.keys, 'admin'), async (c) => {
    const status = c.req.query('status');
    const destination = c.req.query('destination');
    const limit = c.req.query('limit');
    if (status !== undefined && !DELIVERY_STATUSES.includes(status as DeliveryStatus))
      throw new AppError('bad_request', `status is one of ${DELIVERY_STATUSES.join(', ')}`);
    if (destination !== undefined && !DESTINATION.test(destination))
      throw new AppError('bad_request', 'destination is a channel name');
    if (limit !== undefined && (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIST))
      throw new AppError('bad_request', `limit is a whole number from 1 to ${MAX_LIST}`);
    const deliveries = await service().list({
      ...(status ? { status: status as DeliveryStatus } : {}),
      ...(destination ? { destination } : {}),
      ...(limit ? { limit: Number(limit) } : {}),
    });
    return c.json({ deliveries });
  });

  // Channel health: which channels the provider refused the credential of (revoked.ts), and the way out.
  app.get('/v1/deliveries/channels', requireRole(s.keys, 'admin'), async (c) =>
    c.json({ channels: await service().channelHealth() }),
  );

  app.post('/v1/deliveries/channels/:name/restore', requireRole(s.keys, 'admin'), async (c) => {
    const name = c.req.param('name');
    if (!DESTINATION.test(name) || !service().channel(name))
      throw new AppError('not_found', `no channel named ${name} is configured`);
    const restored = await service().restoreChannel(name, c.get('principal').name);
    if (!restored)
      throw new AppError(
        'conflict',
        `channel ${name} is not revoked; GET /v1/deliveries/channels shows each one's state`,
      );
    return c.json({ name, status: 'ok', restored: true });
  });

  app.post('/v1/deliveries/replay', requireRole(s.keys, 'admin'), async (c) => {
    const body = await readJson(c, replayBodySchema, s.config.server.body_limit_bytes);
    const from = body.from === undefined ? undefined : toMs(body.from);
    const to = body.to === undefined ? undefined : toMs(body.to);
    if (from !== undefined && to !== undefined && from >= to)
      throw new AppError('bad_request', '`from` must be before `to`');
    const result = await service().replay({
      ...(body.ids ? { ids: body.ids } : {}),
      ...(body.destination ? { destination: body.destination } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
    });
    if (result.replayed.length === 0 && result.refused.length > 0) {
      throw new AppError(
        'conflict',
        `nothing was replayed: ${result.refused
          .slice(0, 3)
          .map((r) => `${r.id}: ${r.reason}`)
          .join('; ')}`,
        result.refused,
      );
    }
    return c.json(result);
  });
}
