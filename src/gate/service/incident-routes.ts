import { z } from 'zod';
import { parseId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import { requireRole } from '../../kernel/auth.js';
import { readJson } from '../../kernel/body.js';
import type { App } from '../../kernel/module.js';
import type { GateDeps } from '../module.js';
import type { FreezeScope, IncidentStore, RevocationScope } from './incidents-store.js';

const name = z.string().min(1).max(200);
const reason = z.string().min(1).max(2000).optional();

/** Exactly one scope per call: a revoke that names two things would be ambiguous to audit. */
function exactlyOne<T extends Record<string, unknown>>(keys: readonly (keyof T & string)[]) {
  return (body: T, ctx: z.RefinementCtx) => {
    const given = keys.filter((k) => body[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({ code: 'custom', path: [], message: `name exactly one of ${keys.join(', ')}` });
    }
  };
}

export const revokeBodySchema = z
  .strictObject({
    capability_id: z
      .string()
      .refine((v) => parseId('capability', v) !== undefined, 'not a capability id (cap_…)')
      .optional(),
    task_id: z
      .string()
      .refine((v) => parseId('task', v) !== undefined, 'not a task id (tsk_…)')
      .optional(),
    agent: name.optional(),
    tenant: name.optional(),
    reason,
  })
  .superRefine(exactlyOne(['capability_id', 'task_id', 'agent', 'tenant']));

export const freezeBodySchema = z
  .strictObject({ agent: name.optional(), tenant: name.optional(), reason })
  .superRefine(exactlyOne(['agent', 'tenant']));

/** The incident API (admin only): revoke capabilities, freeze and unfreeze agents or tenants. */
export function incidentRoutes(app: App, s: GateDeps, incidents: () => IncidentStore): void {
  const admin = requireRole(s.keys, 'admin');
  const limit = s.config.server.body_limit_bytes;

  app.post('/v1/incidents/revoke', admin, async (c) => {
    const body = await readJson(c, revokeBodySchema, limit);
    const by = c.get('principal').name;
    const [scope, value] = revokeScope(body);
    const revocation = await s.db.tx(async (tx) => {
      const r = await incidents().revoke(tx, {
        scope,
        value,
        by,
        now: s.now(),
        ...(body.reason ? { reason: body.reason } : {}),
      });
      await s.emit(
        {
          type: 'agent.capability.revoked',
          actor: { user_id: by },
          execution: { task_id: scope === 'task' ? value : null },
          redacted_summary: { revocation_id: r.id, scope, value, by, reason: body.reason ?? null },
        },
        tx,
      );
      return r;
    });
    return c.json(revocation, 201);
  });

  for (const [path, frozen] of [
    ['/v1/incidents/freeze', true],
    ['/v1/incidents/unfreeze', false],
  ] as const) {
    app.post(path, admin, async (c) => {
      const body = await readJson(c, freezeBodySchema, limit);
      const by = c.get('principal').name;
      const scope: FreezeScope = body.agent !== undefined ? 'agent' : 'tenant';
      const value = (body.agent ?? body.tenant)!;
      const changed = await s.db.tx(async (tx) => {
        const done = frozen
          ? await incidents().freeze(tx, {
              scope,
              value,
              by,
              now: s.now(),
              ...(body.reason ? { reason: body.reason } : {}),
            })
          : await incidents().unfreeze(tx, { scope, value });
        // Repeating a freeze (or an unfreeze) changes nothing and says so, without a second event.
        if (done) {
          await s.emit(
            {
              type: frozen ? 'agent.agent.frozen' : 'agent.agent.unfrozen',
              actor: { user_id: by },
              redacted_summary: { scope, value, by, reason: body.reason ?? null },
            },
            tx,
          );
        }
        return done;
      });
      return c.json({ scope, value, frozen, changed });
    });
  }

  app.get('/v1/incidents', admin, async (c) => c.json(await incidents().list()));
}

function revokeScope(body: z.output<typeof revokeBodySchema>): [RevocationScope, string] {
  if (body.capability_id !== undefined) return ['capability', body.capability_id];
  if (body.task_id !== undefined) return ['task', body.task_id];
  if (body.agent !== undefined) return ['agent', body.agent];
  if (body.tenant !== undefined) return ['tenant', body.tenant];
  throw new AppError('validation_failed', 'name exactly one of capability_id, task_id, agent, tenant');
}
