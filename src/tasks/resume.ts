import type { TaskState } from '../tasks/port.js';
import { type TasksConfig, resumeTemplate } from './config.js';
import type { TaskRow } from './sql.js';
import type { StoredAction } from './store.js';
import { renderArgv } from './template.js';

export const RESUMABLE: readonly TaskState[] = ['completed', 'failed', 'input-required'];

export type ResumePlan = { ok: true; argv: string[]; cwd: string | null } | { ok: false; error: string };

/**
 * Whether and how a task can continue its session: a pure check of the row against the config, so
 * every refusal has one clear sentence (each is a 409 on `POST /v1/tasks/{id}/resume`).
 */
export function planResume(
  row: TaskRow,
  cfg: TasksConfig,
  running: boolean,
  messageFile: string,
): ResumePlan {
  const action = JSON.parse(row.action) as StoredAction;
  const id = row.id;
  if (action.type !== 'command')
    return { ok: false, error: `task ${id} is an ${action.type} task; only command tasks can be resumed` };
  if (running) return { ok: false, error: `task ${id} is still running; resume it after it stops` };
  if (!RESUMABLE.includes(row.state))
    return {
      ok: false,
      error: `task ${id} is ${row.state}; only a completed, failed or input-required task can be resumed`,
    };
  if (!row.session_id)
    return {
      ok: false,
      error: `task ${id} has no session id yet (it is learned from the agent's hooks), so there is no session to resume`,
    };
  if (!row.runtime)
    return { ok: false, error: `task ${id} has no runtime, so there is no resume command for it` };
  const template = resumeTemplate(cfg, row.runtime);
  if (!template)
    return {
      ok: false,
      error: `there is no resume command for runtime ${row.runtime}; set tasks.resume.${row.runtime}`,
    };
  const rendered = renderArgv(template, {
    session_id: row.session_id,
    task_id: id,
    message_file: messageFile,
  });
  if (!rendered.ok)
    return { ok: false, error: `tasks.resume.${row.runtime} is misconfigured: ${rendered.error}` };
  return { ok: true, argv: rendered.argv, cwd: action.cwd };
}

/** The header of a resume message file: who asked, so the agent (and a reader) can tell. */
export function resumeHeader(by: { name: string; role: string }): string {
  return `# switchboard: message from ${by.name} (${by.role}) to continue this task.\n`;
}
