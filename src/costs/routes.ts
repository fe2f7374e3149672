import { z } from 'zod';
import { requireRole } from '../kernel/auth.js';
import { readQuery } from '../kernel/body.js';
import type { App } from '../kernel/module.js';
import type { CostsDeps } from './module.js';
import { costReport } from './report.js';
import { GROUP_COLUMNS, type GroupBy } from './sql.js';

export const costsQuerySchema = z.strictObject({
  by: z.enum(Object.keys(GROUP_COLUMNS) as [GroupBy, ...GroupBy[]]).default('agent'),
  /** `7d`, `24h`, `2w`, `30m`, or a date; counted in whole UTC days. */
  since: z.string().min(1).max(40).default('7d'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** Only this agent's rows. */
  agent: z.string().min(1).max(200).optional(),
});

/** `GET /v1/costs`: the ledger summed by agent, task, session or day (admin, CONTRACT.md). */
export function costsRoutes(app: App, s: CostsDeps): void {
  app.get('/v1/costs', requireRole(s.keys, 'admin'), async (c) => {
    const q = readQuery(c, costsQuerySchema);
    const cfg = s.config.costs;
    return c.json(
      await costReport(
        s.db,
        s.config.tenant.id,
        cfg.currency,
        { by: q.by, since: q.since, limit: q.limit, ...(q.agent !== undefined ? { agent: q.agent } : {}) },
        s.now(),
      ),
    );
  });
}
