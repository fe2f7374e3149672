import { z } from 'zod';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readJson, readQuery } from '../kernel/body.js';
import type { App, Deps } from '../kernel/module.js';

export const deadOutboxQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const outboxReplayBodySchema = z
  .strictObject({
    /** Dead rows by id (`GET /v1/outbox/dead`). */
    ids: z.array(z.number().int().positive()).min(1).max(1000).optional(),
    /** Every dead row. */
    all: z.literal(true).optional(),
  })
  .refine((b) => (b.ids !== undefined) !== (b.all !== undefined), {
    message: 'name the rows to replay: either ids or all: true',
  });

/**
 * The outbox's dead letters (issue 20 point 8): rows the relay parked after its last attempt, listed
 * with the subscriber that failed and its version, and put back for the relay. Admin only; a GET reads.
 */
export function outboxRoutes(app: App, s: Pick<Deps, 'keys' | 'log' | 'logger' | 'config'>): void {
  const admin = requireRole(s.keys, 'admin');
  app.get('/v1/outbox/dead', admin, async (c) => {
    const q = readQuery(c, deadOutboxQuerySchema);
    return c.json({ rows: await s.log.deadOutbox(q.limit) });
  });
  app.post('/v1/outbox/replay', admin, async (c) => {
    const body = await readJson(c, outboxReplayBodySchema, s.config.server.body_limit_bytes);
    const ids = body.all ? 'all' : body.ids!;
    const moved = await s.log.replayOutbox(ids);
    if (ids !== 'all') {
      const missing = ids.filter((id) => !moved.some((m) => m.id === id));
      if (moved.length === 0)
        throw new AppError(
          'not_found',
          `no dead outbox row ${missing.join(', ')} (GET /v1/outbox/dead lists them)`,
        );
    }
    s.logger.info(
      { by: c.get('principal').name, replayed: moved.length },
      'outbox: dead rows put back for the relay',
    );
    return c.json({
      replayed: moved.map((m) => m.id),
      ...(ids !== 'all' ? { not_dead: ids.filter((id) => !moved.some((m) => m.id === id)) } : {}),
    });
  });
}
