import { z } from 'zod';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readQuery } from '../kernel/body.js';
import type { App, Services } from '../kernel/module.js';
import { EFFECT_STATUSES, type EffectsPort } from './port.js';

/** `GET /v1/effects` (the effect ledger; `?status=unsettled` is what waits for a person) and the trace. */

export const effectsQuerySchema = z.strictObject({
  status: z.enum(EFFECT_STATUSES as [string, ...string[]]).optional(),
  task_id: z
    .string()
    .regex(/^tsk_[0-9A-HJKMNP-TV-Z]{26}$/, 'a task id (tsk_…)')
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/** Any id a chain can be entered by: an event, task, effect, delivery, correlation or touch request id. */
const TRACE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function effectsRoutes(app: App, s: Services, service: () => EffectsPort | undefined): void {
  const running = (): EffectsPort => {
    const e = service();
    if (!e) throw new AppError('not_ready', 'the effects module has not started');
    return e;
  };

  app.get('/v1/effects', requireRole(s.keys, 'admin'), async (c) => {
    const f = readQuery(c, effectsQuerySchema);
    const effects = await running().list({
      ...(f.status ? { status: f.status as (typeof EFFECT_STATUSES)[number] } : {}),
      ...(f.task_id ? { task_id: f.task_id } : {}),
      ...(f.limit ? { limit: f.limit } : {}),
    });
    return c.json({ effects });
  });

  app.get('/v1/effects/trace/:id', requireRole(s.keys, 'admin'), async (c) => {
    const id = c.req.param('id');
    if (!TRACE_ID.test(id))
      throw new AppError(
        'bad_request',
        'id is an event, task, effect, delivery or touch id (evt_…, tsk_…, eff_…)',
      );
    const trace = await running().trace(id);
    if (!trace) throw new AppError('not_found', `nothing in the log or the effect ledger names ${id}`);
    return c.json(trace);
  });
}
