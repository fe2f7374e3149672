import type { TaskState, TaskView } from '../tasks/port.js';
import type { Sql } from '../store/port.js';

/** A `tasks` row as both dialects return it (BIGINT times as numbers, JSON as text). */
export interface TaskRow {
  id: string;
  state: TaskState;
  owner: string | null;
  runtime: string | null;
  session_id: string | null;
  tenant_id: string;
  environment: string;
  correlation_id: string;
  cause_event_id: string;
  hop_count: number;
  depth: number;
  title: string;
  trigger_id: string;
  action: string;
  untrusted_ref: string | null;
  untrusted_digest: string | null;
  steps: number;
  max_steps: number | null;
  max_runtime_ms: number | null;
  created_at: number;
  updated_at: number;
  last_activity_at: number;
  stalled_at: number | null;
  exit_code: number | null;
  pid: number | null;
  boot_id: string | null;
  host: string | null;
  gateway_pid: number | null;
  key_digest: string | null;
  error: string | null;
  /** The launcher's idempotency marker (an admitted run's id); unique. */
  launch_key: string | null;
  /** Set just before the process was spawned (or the POST sent): null means nothing ran. */
  spawn_at: number | null;
}

export type NewTask = Pick<
  TaskRow,
  | 'id'
  | 'owner'
  | 'runtime'
  | 'tenant_id'
  | 'environment'
  | 'correlation_id'
  | 'cause_event_id'
  | 'hop_count'
  | 'depth'
  | 'title'
  | 'trigger_id'
  | 'action'
  | 'untrusted_ref'
  | 'untrusted_digest'
  | 'max_steps'
  | 'max_runtime_ms'
  | 'boot_id'
  | 'host'
  | 'gateway_pid'
  | 'launch_key'
  | 'spawn_at'
>;

/** The columns a transition may set besides state and updated_at. */
export type TransitionSet = Partial<
  Pick<
    TaskRow,
    | 'exit_code'
    | 'pid'
    | 'boot_id'
    | 'host'
    | 'gateway_pid'
    | 'key_digest'
    | 'error'
    | 'stalled_at'
    | 'last_activity_at'
    | 'steps'
  >
>;

export const TERMINAL: readonly TaskState[] = ['completed', 'failed', 'canceled', 'rejected'];
/** States in which a local process may be running for the task. */
export const LIVE: readonly TaskState[] = ['submitted', 'working', 'input-required'];

export function insertTask(t: NewTask, now: number): Sql {
  // A second launch with the same key inserts nothing (and gets no row back): the caller returns the
  // task the first one made (TaskStore.submit).
  return {
    text: `INSERT INTO tasks (id, state, owner, runtime, tenant_id, environment, correlation_id, cause_event_id,
             hop_count, depth, title, trigger_id, action, untrusted_ref, untrusted_digest, steps, max_steps,
             max_runtime_ms, boot_id, host, gateway_pid, launch_key, spawn_at, created_at, updated_at,
             last_activity_at)
           VALUES ($1, 'submitted', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 0, $15, $16, $17, $18, $19,
             $21, $22, $20, $20, $20)
           ON CONFLICT (launch_key) DO NOTHING
           RETURNING *`,
    values: [
      t.id,
      t.owner,
      t.runtime,
      t.tenant_id,
      t.environment,
      t.correlation_id,
      t.cause_event_id,
      t.hop_count,
      t.depth,
      t.title,
      t.trigger_id,
      t.action,
      t.untrusted_ref,
      t.untrusted_digest,
      t.max_steps,
      t.max_runtime_ms,
      t.boot_id,
      t.host,
      t.gateway_pid,
      now,
      t.launch_key,
      t.spawn_at,
    ],
  };
}

export function selectByLaunchKey(key: string): Sql {
  return { text: 'SELECT * FROM tasks WHERE launch_key = $1', values: [key] };
}

/** The write-ahead mark of a spawn (or a POST): recorded before the effect, never cleared. */
export function markSpawn(id: string, now: number): Sql {
  return { text: 'UPDATE tasks SET spawn_at = $2 WHERE id = $1 AND spawn_at IS NULL', values: [id, now] };
}

export function selectTask(id: string): Sql {
  return { text: 'SELECT * FROM tasks WHERE id = $1', values: [id] };
}

/**
 * One state change as one conditional UPDATE: it happens only from one of `from`, so of two racing
 * writers (the exit handler and the runtime timer) exactly one gets the row back and emits the event.
 */
export function transition(
  id: string,
  from: readonly TaskState[],
  to: TaskState,
  now: number,
  set: TransitionSet = {},
): Sql {
  const values: unknown[] = [to, now];
  const sets = ['state = $1', 'updated_at = $2'];
  for (const [col, value] of Object.entries(set)) {
    if (value === undefined) continue;
    values.push(value);
    sets.push(`${col} = $${values.length}`);
  }
  values.push(id);
  const idParam = `$${values.length}`;
  const states = from.map((s) => {
    values.push(s);
    return `$${values.length}`;
  });
  return {
    text: `UPDATE tasks SET ${sets.join(', ')} WHERE id = ${idParam} AND state IN (${states.join(', ')}) RETURNING *`,
    values,
  };
}

/** Activity from a hook or tool call; clears a reported stall so the next one is reported again. */
export function touchTask(
  id: string,
  now: number,
  opts: { step: boolean; session_id: string | null; runtime: string | null },
): Sql {
  return {
    text: `UPDATE tasks SET last_activity_at = $1, updated_at = $1, steps = steps + $2,
             session_id = COALESCE($3, session_id), runtime = COALESCE(runtime, $4), stalled_at = NULL
           WHERE id = $5 RETURNING *`,
    values: [now, opts.step ? 1 : 0, opts.session_id, opts.runtime, id],
  };
}

/** The exit code of a process whose task was already ended by a limit: recorded, no transition. */
export function recordExit(id: string, code: number | null): Sql {
  return { text: 'UPDATE tasks SET exit_code = $1 WHERE id = $2 AND exit_code IS NULL', values: [code, id] };
}

/** Working tasks quiet since `cutoff` whose stall was not reported yet. */
export function selectStalled(cutoff: number, limit: number): Sql {
  return {
    text: `SELECT * FROM tasks WHERE state = 'working' AND stalled_at IS NULL AND last_activity_at < $1
           ORDER BY last_activity_at LIMIT $2`,
    values: [cutoff, limit],
  };
}

/** Marks a stall once: the guard repeats the selection so a touch in between wins. */
export function markStalled(id: string, cutoff: number, now: number): Sql {
  return {
    text: `UPDATE tasks SET stalled_at = $1 WHERE id = $2 AND state = 'working' AND stalled_at IS NULL
             AND last_activity_at < $3 RETURNING *`,
    values: [now, id, cutoff],
  };
}

/** The newest tasks first, optionally of one state, owner or runtime. */
export function listTasks(f: { state?: TaskState; owner?: string; runtime?: string; limit: number }): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  for (const [col, value] of [
    ['state', f.state],
    ['owner', f.owner],
    ['runtime', f.runtime],
  ] as const) {
    if (value === undefined) continue;
    values.push(value);
    where.push(`${col} = $${values.length}`);
  }
  values.push(f.limit);
  return {
    text: `SELECT * FROM tasks ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
    values,
  };
}

/** Tasks with a local process that some earlier boot of a gateway started. */
export function selectOrphans(bootId: string): Sql {
  return {
    text: `SELECT * FROM tasks WHERE boot_id IS NOT NULL AND boot_id <> $1
             AND state IN ('submitted', 'working', 'input-required')`,
    values: [bootId],
  };
}

export function toView(row: TaskRow): TaskView {
  return {
    id: row.id,
    state: row.state,
    owner: row.owner,
    runtime: row.runtime,
    session_id: row.session_id,
    correlation_id: row.correlation_id,
    title: row.title,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_activity_at: iso(row.last_activity_at),
    steps: Number(row.steps),
    lineage: { hop_count: Number(row.hop_count), depth: Number(row.depth) },
    untrusted_input: row.untrusted_ref !== null,
  };
}

function iso(ms: number): string {
  return new Date(Number(ms)).toISOString();
}

/**
 * The supervisor's leadership (PostgreSQL only): a session advisory lock, held on a dedicated
 * connection for as long as this replica leads (supervisor.ts, `AdvisoryLock`).
 */
export function tryLeadership(key: number): Sql {
  return { text: 'SELECT pg_try_advisory_lock($1) AS ok', values: [key] };
}

/** Whether the leader's connection still answers: a dead one has lost the lock without saying so. */
export function leadershipAlive(): Sql {
  return { text: 'SELECT 1' };
}

export function releaseLeadership(key: number): Sql {
  return { text: 'SELECT pg_advisory_unlock($1)', values: [key] };
}
