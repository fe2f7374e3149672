/**
 * `switchboard tasks list|cancel`: a client of `GET /v1/tasks` and `POST /v1/tasks/{id}/cancel`, so it
 * works against a remote gateway and passes the same checks as anyone else (an admin key sees every
 * task; an agent key only the task it is bound to).
 */

import { gatewayCall } from './client.js';

export interface TasksCliOptions {
  /** Only tasks in this state (`list`). */
  state?: string;
  owner?: string;
  limit?: string;
  /** Print JSON instead of one line per task. */
  json?: boolean;
  url?: string;
  env?: NodeJS.ProcessEnv;
  out?: (line: string) => void;
}

interface TaskJson {
  id: string;
  state: string;
  title: string;
  owner: string | null;
  runtime: string | null;
  updated_at: string;
  exit_code: number | null;
  error: string | null;
}

/** One line per task: id, state, owner/runtime, last change, title (and why it ended, when it failed). */
export function formatTask(t: TaskJson): string {
  const who = [t.owner, t.runtime].filter(Boolean).join('/') || '-';
  const why = t.error ? `  (${t.error})` : t.exit_code !== null ? `  (exit ${t.exit_code})` : '';
  return `${t.id}  ${t.state.padEnd(14)}  ${who}  ${t.updated_at}  ${JSON.stringify(t.title)}${why}`;
}

function call(method: string, path: string, opts: TasksCliOptions): Promise<unknown> {
  return gatewayCall(method, path, opts, {
    roles: ['admin', 'agent'],
    forbidden: (error) => `this key may not do that: ${error?.message ?? 'forbidden'}`,
  });
}

function print(opts: TasksCliOptions, line: string): void {
  (opts.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
}

export async function list(opts: TasksCliOptions = {}): Promise<void> {
  const query = new URLSearchParams();
  if (opts.state) query.set('state', opts.state);
  if (opts.owner) query.set('owner', opts.owner);
  if (opts.limit) query.set('limit', opts.limit);
  const qs = query.size > 0 ? `?${query}` : '';
  const body = (await call('GET', `/v1/tasks${qs}`, opts)) as { tasks: TaskJson[] };
  if (opts.json) {
    for (const t of body.tasks) print(opts, JSON.stringify(t));
    return;
  }
  if (body.tasks.length === 0) print(opts, `no ${opts.state ? `${opts.state} ` : ''}tasks`);
  for (const t of body.tasks) print(opts, formatTask(t));
}

/** Cancels a running task: its whole process group is stopped, and its state becomes `canceled`. */
export async function cancel(id: string, opts: TasksCliOptions = {}): Promise<void> {
  if (!/^tsk_[0-9A-Z]{26}$/.test(id)) throw new Error(`${JSON.stringify(id)} is not a task id (tsk_…)`);
  const t = (await call('POST', `/v1/tasks/${id}/cancel`, opts)) as TaskJson;
  print(opts, opts.json ? JSON.stringify(t) : formatTask(t));
}
