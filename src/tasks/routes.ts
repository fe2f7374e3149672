import { z } from 'zod';
import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { readJson, readQuery } from '../kernel/body.js';
import type { App, Principal, Services } from '../kernel/module.js';
import type { TaskRunner } from './service.js';
import { type TaskRow, toView } from './sql.js';

/** 64 KiB: a resume message is a person's instruction, not a document; the body limit still applies. */
export const MAX_RESUME_MESSAGE_CHARS = 64 * 1024;

export const resumeBodySchema = z.strictObject({
  message: z.string().min(1).max(MAX_RESUME_MESSAGE_CHARS),
});

/** A page of `GET /v1/tasks`: newest first; the console and `switchboard tasks list` read it. */
export const TASK_LIST_DEFAULT = 50;
export const TASK_LIST_MAX = 500;

export const TASK_STATES = [
  'submitted',
  'working',
  'input-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
] as const;

export const taskListQuerySchema = z.strictObject({
  state: z.enum(TASK_STATES).optional(),
  owner: z.string().min(1).max(200).optional(),
  runtime: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(TASK_LIST_MAX).default(TASK_LIST_DEFAULT),
});

/** `POST /v1/tasks/{id}/cancel` takes an empty body or `{}`; a reason may come later. */
export const cancelBodySchema = z.strictObject({});

/** The task as the API shows it: the port's view plus what an owner needs to see why it ended. */
export function taskBody(row: TaskRow) {
  const action = JSON.parse(row.action) as { type: string };
  return {
    ...toView(row),
    trigger_id: row.trigger_id,
    action: action.type,
    max_steps: row.max_steps === null ? null : Number(row.max_steps),
    max_runtime_seconds: row.max_runtime_ms === null ? null : Number(row.max_runtime_ms) / 1000,
    exit_code: row.exit_code === null ? null : Number(row.exit_code),
    error: row.error,
  };
}

/**
 * An agent key sees only its own task; for any other id it gets 404, so a key cannot probe which task
 * ids exist. An agent key bound to no task is refused outright.
 */
function mayRead(principal: Principal, id: string): boolean {
  if (principal.role === 'admin') return true;
  if (principal.task_id === undefined) {
    throw new AppError(
      'forbidden',
      'this agent key is not bound to a task; use the key the task was launched with',
    );
  }
  return principal.task_id === id;
}

export function taskRoutes(app: App, s: Services, runner: () => TaskRunner | undefined): void {
  const started = (): TaskRunner => {
    const r = runner();
    if (!r) throw new AppError('not_ready', 'the tasks module is not started');
    return r;
  };

  app.get('/v1/tasks/:id', requireRole(s.keys, 'admin', 'agent'), async (c) => {
    const id = c.req.param('id');
    if (!mayRead(c.get('principal'), id)) throw new AppError('not_found', `no task ${id}`);
    const row = await started().row(id);
    if (!row) throw new AppError('not_found', `no task ${id}`);
    return c.json(taskBody(row));
  });

  app.get('/v1/tasks', requireRole(s.keys, 'admin', 'agent'), async (c) => {
    const f = readQuery(c, taskListQuerySchema);
    const principal = c.get('principal');
    const tasks = started();
    if (principal.role !== 'admin') {
      // An agent sees its own task only: the one its key is bound to.
      mayRead(principal, '');
      const row = await tasks.row(principal.task_id!);
      const own = row && (f.state === undefined || row.state === f.state) ? [taskBody(row)] : [];
      return c.json({ tasks: own });
    }
    const views = await tasks.list({
      limit: f.limit,
      ...(f.state ? { state: f.state } : {}),
      ...(f.owner ? { owner: f.owner } : {}),
      ...(f.runtime ? { runtime: f.runtime } : {}),
    });
    const rows = await Promise.all(views.map((v) => tasks.row(v.id)));
    return c.json({ tasks: rows.filter((r): r is TaskRow => r !== undefined).map(taskBody) });
  });

  app.post('/v1/tasks/:id/cancel', requireRole(s.keys, 'admin', 'agent'), async (c) => {
    const id = c.req.param('id');
    const principal = c.get('principal');
    if (!mayRead(principal, id)) throw new AppError('not_found', `no task ${id}`);
    if ((c.req.header('content-length') ?? '0') !== '0') {
      await readJson(c, cancelBodySchema, s.config.server.body_limit_bytes);
    }
    const tasks = started();
    await tasks.cancel(id, principal);
    const row = await tasks.row(id);
    if (!row) throw new AppError('not_found', `no task ${id}`);
    return c.json(taskBody(row));
  });

  app.post('/v1/tasks/:id/resume', requireRole(s.keys, 'admin', 'approver'), async (c) => {
    const id = c.req.param('id');
    const body = await readJson(c, resumeBodySchema, s.config.server.body_limit_bytes);
    const tasks = started();
    await tasks.resume(id, body.message, c.get('principal'));
    const row = await tasks.row(id);
    if (!row) throw new AppError('not_found', `no task ${id}`);
    return c.json(taskBody(row), 202);
  });
}
