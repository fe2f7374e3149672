import { z } from 'zod';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readJson } from '../kernel/body.js';
import type { App } from '../kernel/module.js';
import type { SignalsDeps } from './module.js';
import { readAway, switchAndRecord, TENANT_OWNER } from './away.js';
import type { SignalsConfig } from './config.js';

const OWNER_MAX = 200;

export const putAwaySchema = z.strictObject({
  away: z.boolean(),
  /** Whose switch; omitted: the tenant's own, which every owner without a row of their own follows. */
  owner: z.string().min(1).max(OWNER_MAX).optional(),
});

/** `GET/PUT /v1/away`: people switch away mode; agents never can. */
export function awayRoutes(app: App, s: SignalsDeps, cfg: () => SignalsConfig): void {
  const people = requireRole(s.keys, 'admin', 'approver');
  app.get('/v1/away', people, async (c) => {
    const owner = c.req.query('owner') ?? TENANT_OWNER;
    if (owner.length > OWNER_MAX) throw new AppError('validation_failed', 'owner is too long');
    return c.json(await readAway(s.db, owner, cfg(), s.now()));
  });
  app.put('/v1/away', people, async (c) => {
    const body = await readJson(c, putAwaySchema, s.config.server.body_limit_bytes);
    const view = await switchAndRecord(
      s,
      cfg(),
      body.owner ?? TENANT_OWNER,
      body.away,
      c.get('principal').name,
    );
    return c.json(view);
  });
}
