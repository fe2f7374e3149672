import type { Context } from 'hono';
import { AppError } from '../errors/index.js';
import type { AppEnv } from '../kernel/module.js';
import type { ReportContext } from './port.js';

/** The header a general agent key uses to say which task it reports for (a task-bound key needs none). */
export const TASK_HEADER = 'x-switchboard-task';

/**
 * The task a call is about: a task-bound key decides it; a general agent key may name one in
 * `X-Switchboard-Task`. A header that contradicts the key is refused, never silently replaced.
 */
export function reportContext(c: Context<AppEnv>): ReportContext {
  const principal = c.get('principal');
  const header = c.req.header(TASK_HEADER)?.trim() || undefined;
  if (principal.task_id && header && header !== principal.task_id) {
    throw new AppError('forbidden', `this key is bound to another task than ${TASK_HEADER} names`);
  }
  const task_id = principal.task_id ?? header ?? null;
  const session = c.req.header('x-switchboard-session')?.trim();
  return { principal, task_id, ...(session ? { session_id: session } : {}) };
}
