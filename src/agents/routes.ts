import { z } from 'zod';
import { isId } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readJson } from '../kernel/body.js';
import type { App, Deps } from '../kernel/module.js';
import { AGENT_ID } from './config.js';
import { type AgentsService, collaborationSchema } from './port.js';

/**
 * The HTTP surface (CONTRACT.md): `GET /v1/agents` (the registry, liveness judged now),
 * `POST /v1/agents` (an agent registers itself with a key named for it), `POST /v1/agents/{id}/heartbeat`
 * (only the key bound to that agent), `POST /v1/collaborations` (route a skill request; answers with
 * the receipt once it ended) and `GET /v1/collaborations/{ref_id}` (the receipt; reads only).
 */

export const registerSchema = z
  .strictObject({
    id: z.string().regex(AGENT_ID, 'an agent id is 1–64 of A-Z a-z 0-9 _ . - (the name of its key)'),
    card_url: z.string().min(1).max(2048).optional(),
    card: z.record(z.string(), z.unknown()).optional(),
    weight: z.number().positive().max(1000).optional(),
  })
  .refine((r) => (r.card_url === undefined) !== (r.card === undefined), {
    message: 'send exactly one of card_url or card',
  });
export type RegisterRequest = z.output<typeof registerSchema>;

export const heartbeatSchema = z.strictObject({
  /** What the agent says it carries: a queue length or a utilisation; routing adds the calls open to it. */
  load: z.number().min(0).max(1_000_000).optional(),
  /** `down`: take no work now (draining); `up` again when ready. */
  status: z.enum(['up', 'down']).optional(),
});
export type HeartbeatRequest = z.output<typeof heartbeatSchema>;

export interface AgentsRoutes {
  service(): AgentsService;
  register(req: RegisterRequest, by: { name: string; role: string }): Promise<unknown>;
  heartbeat(id: string, req: HeartbeatRequest): Promise<unknown>;
  known(id: string): boolean;
}

export function agentsRoutes(app: App, deps: Deps, r: () => AgentsRoutes | undefined): void {
  const routes = (): AgentsRoutes => {
    const x = r();
    if (!x) throw new AppError('not_ready', 'the agents module has not started');
    return x;
  };
  const limit = deps.config.server.body_limit_bytes;

  app.get('/v1/agents', requireRole(deps.keys, 'agent', 'admin'), (c) => {
    c.header('Cache-Control', 'no-store');
    // The shape (CONTRACT.md leaves the detail to it): a bare list, one entry per agent.
    return c.json(routes().service().list());
  });

  app.post('/v1/agents', requireRole(deps.keys, 'agent', 'admin'), async (c) => {
    const body = await readJson(c, registerSchema, limit);
    const p = c.get('principal');
    // An agent registers itself only: the key's name is the agent id (an admin may register any).
    if (p.role !== 'admin' && p.name !== body.id)
      throw new AppError('forbidden', `this key is bound to ${p.name}, not to agent ${body.id}`);
    if (p.task_id) throw new AppError('forbidden', 'a task key cannot register an agent');
    return c.json(await routes().register(body, p), 201);
  });

  app.post('/v1/agents/:id/heartbeat', requireRole(deps.keys, 'agent', 'admin'), async (c) => {
    const id = c.req.param('id');
    const body = await readJson(c, heartbeatSchema, limit);
    const x = routes();
    if (!x.known(id)) throw new AppError('not_found', `no agent ${id}; register it with POST /v1/agents`);
    const p = c.get('principal');
    if (p.name !== id || p.task_id)
      throw new AppError(
        'forbidden',
        `only the key bound to agent ${id} (named ${id}) may send its heartbeats`,
      );
    return c.json(await x.heartbeat(id, body));
  });

  app.post('/v1/collaborations', requireRole(deps.keys, 'agent', 'admin'), async (c) => {
    const body = await readJson(c, collaborationSchema, limit);
    c.header('Cache-Control', 'no-store');
    return c.json(await routes().service().collaborate(body, c.get('principal')));
  });

  app.get('/v1/collaborations/:ref_id', requireRole(deps.keys, 'agent', 'admin'), async (c) => {
    const id = c.req.param('ref_id');
    if (!isId('collaboration', id)) throw new AppError('not_found', 'no such collaboration (ids start col_)');
    const receipt = await routes().service().receipt(id, c.get('principal'));
    if (!receipt) throw new AppError('not_found', `no collaboration ${id} asked by this key`);
    c.header('Cache-Control', 'no-store');
    return c.json(receipt);
  });
}
