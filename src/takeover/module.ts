import { z } from 'zod';
import { approvalsPort } from '../approvals/port.js';
import { deliveryPort } from '../delivery/port.js';
import { effectsPort } from '../effects/port.js';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readQuery } from '../kernel/body.js';
import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { sessionWatchPort } from '../signals/port.js';
import { tasksPort } from '../tasks/port.js';
import { type TakeoverItem, takeoverPort, type TakeoverSource } from './port.js';
import { builtInSources } from './sources.js';

const requires = {
  approvals: optional(approvalsPort),
  sessions: optional(sessionWatchPort),
  delivery: optional(deliveryPort),
  tasks: optional(tasksPort),
  effects: optional(effectsPort),
};
export type TakeoverDeps = Deps<typeof requires>;

export const takeoverQuerySchema = z.strictObject({
  /** At most this many items per kind. */
  limit: z.coerce.number().int().min(1).max(500).default(50),
  /** Only this kind (`approval`, `dead_letter`, …). */
  kind: z.string().min(1).max(60).optional(),
});

/**
 * The takeover queue (issue 19 point 5): one list of what waits for a person, oldest first, read
 * through the other modules' ports at request time (no table of its own).
 */
export function takeoverModule() {
  const registered: TakeoverSource[] = [];
  const sources = (s: TakeoverDeps): TakeoverSource[] => [
    ...builtInSources({
      approvals: s.approvals,
      sessions: s.sessions,
      delivery: s.delivery,
      tasks: s.tasks,
      effects: s.effects,
      log: s.log,
    }),
    ...registered,
  ];
  return defineModule({
    name: 'takeover',
    requires,
    provides: [takeoverPort],
    routes(app, s) {
      app.get('/v1/takeover', requireRole(s.keys, 'admin', 'approver'), async (c) => {
        const q = readQuery(c, takeoverQuerySchema);
        const all = sources(s);
        const chosen = q.kind === undefined ? all : all.filter((x) => x.kind === q.kind);
        if (q.kind !== undefined && chosen.length === 0)
          throw new AppError(
            'validation_failed',
            `kind: "${q.kind}" is not listed here; kinds: ${all.map((x) => x.kind).join(', ')}`,
          );
        const lists = await Promise.all(chosen.map((x) => x.list(q.limit)));
        const items: TakeoverItem[] = lists.flat().sort((a, b) => a.since.localeCompare(b.since));
        const counts = Object.fromEntries(chosen.map((x, i) => [x.kind, lists[i]!.length]));
        return c.json({ items, counts });
      });
    },
    start(s) {
      s.provide(takeoverPort, {
        register(source) {
          if (sources(s).some((x) => x.kind === source.kind))
            throw new Error(`takeover: a source of kind ${source.kind} is already listed`);
          registered.push(source);
        },
      });
    },
  });
}
