import { type Sql, sql } from '../store/port.js';

/** An `a2a_tasks` row (BIGINT times as numbers in both dialects once read through `Number`). */
export interface A2ATaskRow {
  id: string;
  owner: string;
  context_id: string;
  cause_event_id: string | null;
  sb_task_id: string | null;
  /** The skill the task runs (null for rows written before 0603). */
  skill: string | null;
  state: string;
  task: string;
  created_at: number;
  updated_at: number;
}

export interface PushConfigRow {
  task_id: string;
  id: string;
  url: string;
  token: string;
  auth_scheme: string | null;
  auth_ref: string | null;
  wire_version: string;
  created_at: number;
}

export interface SigningKeyRow {
  kid: string;
  public_jwk: string;
  private_ref: string;
  created_at: number;
  rotate_at: number;
  retire_at: number;
}

const TERMINAL = `('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')`;

/**
 * Inserts a task or replaces its body: the SDK's saves and the executor's first write (`store.ts`).
 * Such a write never enters, leaves or swaps an ended state (an older snapshot, or the SDK's own
 * CANCELED for a task with no run attached): only `changeTask`, the state machine of `change.ts`,
 * ends a task, so a terminal state is recorded, and pushed, once. Nor does it move a task back to
 * SUBMITTED (the SDK's save of the task it was first handed, after the run's start was recorded in
 * the launch's transaction). Owner and cause never change.
 */
export function upsertTask(r: {
  id: string;
  owner: string;
  contextId: string;
  causeEventId: string | null;
  state: string;
  task: string;
  now: number;
  skill?: string | null;
  /** The Switchboard task of a new task, when it is written with it (the executor); else linked later. */
  sbTaskId?: string | null;
}): Sql {
  return sql(
    `INSERT INTO a2a_tasks (id, owner, context_id, cause_event_id, sb_task_id, state, task, created_at, updated_at, skill)
     VALUES ($1, $2, $3, $4, $9, $5, $6, $7, $7, $8)
     ON CONFLICT (id) DO UPDATE SET state = $5, task = $6, updated_at = $7,
       cause_event_id = COALESCE(a2a_tasks.cause_event_id, $4), skill = COALESCE(a2a_tasks.skill, $8),
       input_claim = CASE WHEN a2a_tasks.state = $5 THEN a2a_tasks.input_claim ELSE NULL END,
       input_claim_at = CASE WHEN a2a_tasks.state = $5 THEN a2a_tasks.input_claim_at ELSE NULL END
     WHERE a2a_tasks.state = excluded.state
       OR (a2a_tasks.state NOT IN ${TERMINAL} AND excluded.state NOT IN ${TERMINAL}
           AND excluded.state <> 'TASK_STATE_SUBMITTED')`,
    r.id,
    r.owner,
    r.contextId,
    r.causeEventId,
    r.state,
    r.task,
    r.now,
    r.skill ?? null,
    r.sbTaskId ?? null,
  );
}

/**
 * A compare-and-set change of an open task (`change.ts`): the row comes back only when it still has
 * the state and body the writer read, and has not ended. Of two writers that read the same row (two
 * gateways on PostgreSQL: the task-event subscriber and a cancel recorded by `record.ts`), the second
 * UPDATE waits for the first's row lock, finds the row changed and changes nothing.
 */
export function changeTask(
  id: string,
  from: { state: string; task: string },
  to: { state: string; task: string },
  now: number,
): Sql {
  return sql(
    `UPDATE a2a_tasks SET state = $4, task = $5, updated_at = $6,
       input_claim = CASE WHEN state = $4 THEN input_claim ELSE NULL END,
       input_claim_at = CASE WHEN state = $4 THEN input_claim_at ELSE NULL END
     WHERE id = $1 AND state = $2 AND task = $3 AND state NOT IN ${TERMINAL}
     RETURNING id`,
    id,
    from.state,
    from.task,
    to.state,
    to.task,
    now,
  );
}

/**
 * Claims an input-required task for the message that continues it: the row comes back to one caller
 * only (a conditional UPDATE), and only while the task is input-required with no claim newer than
 * `staleBefore`. A change of state clears the claim (`upsertTask`).
 */
export function claimInput(id: string, claim: string, now: number, staleBefore: number): Sql {
  return sql(
    `UPDATE a2a_tasks SET input_claim = $2, input_claim_at = $3
     WHERE id = $1 AND state = 'TASK_STATE_INPUT_REQUIRED' AND (input_claim IS NULL OR input_claim_at < $4)
     RETURNING id`,
    id,
    claim,
    now,
    staleBefore,
  );
}

/** Gives up a claim: the message failed before it continued the task (`claim` null: whoever holds it). */
export function releaseInput(id: string, claim: string | null): Sql {
  return claim === null
    ? sql('UPDATE a2a_tasks SET input_claim = NULL, input_claim_at = NULL WHERE id = $1', id)
    : sql(
        'UPDATE a2a_tasks SET input_claim = NULL, input_claim_at = NULL WHERE id = $1 AND input_claim = $2',
        id,
        claim,
      );
}

/** PostgreSQL advisory lock that serialises skill budget checks (count, then write the task). */
export function lockSkillBudgets(): Sql {
  return sql('SELECT pg_advisory_xact_lock($1)', 72_616_734);
}

/** Tasks of a skill created since `since` (the start of the UTC day): what `budget.per_day` counts. */
export function countSkillTasksSince(skill: string, since: number): Sql {
  return sql('SELECT COUNT(*) AS n FROM a2a_tasks WHERE skill = $1 AND created_at >= $2', skill, since);
}

/** A2A tasks of every skill since `since` (the start of the UTC day): what `loop.tenant_runs_per_day` counts here. */
export function countTasksSince(since: number): Sql {
  return sql('SELECT COUNT(*) AS n FROM a2a_tasks WHERE created_at >= $1', since);
}

/** Tasks of a skill that have not ended: what `budget.concurrent` counts. */
export function countSkillTasksOpen(skill: string): Sql {
  return sql(`SELECT COUNT(*) AS n FROM a2a_tasks WHERE skill = $1 AND state NOT IN ${TERMINAL}`, skill);
}

export function selectTask(id: string): Sql {
  return sql('SELECT * FROM a2a_tasks WHERE id = $1', id);
}

export function selectTaskByCause(causeEventId: string): Sql {
  return sql('SELECT * FROM a2a_tasks WHERE cause_event_id = $1', causeEventId);
}

/**
 * The A2A task a Switchboard task runs now: the newest one linked to it (each follow-up message in a
 * context is a new A2A task resuming the same Switchboard task).
 */
export function selectTaskBySwitchboardTask(sbTaskId: string): Sql {
  return sql(
    'SELECT * FROM a2a_tasks WHERE sb_task_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
    sbTaskId,
  );
}

export function linkSwitchboardTask(id: string, sbTaskId: string): Sql {
  return sql('UPDATE a2a_tasks SET sb_task_id = $2 WHERE id = $1', id, sbTaskId);
}

/**
 * A page of tasks, newest first; `owner` null lists every owner's (an admin). The page token is the
 * last row's `created_at` and id, so a page never repeats or skips a row inserted meanwhile.
 */
export function listTasks(f: {
  owner: string | null;
  contextId?: string;
  state?: string;
  updatedAfter?: number;
  before?: { createdAt: number; id: string };
  limit: number;
}): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (clause: (n: number) => string, ...vs: unknown[]) => {
    where.push(clause(values.length + 1));
    values.push(...vs);
  };
  if (f.owner !== null) add((n) => `owner = $${n}`, f.owner);
  if (f.contextId) add((n) => `context_id = $${n}`, f.contextId);
  if (f.state) add((n) => `state = $${n}`, f.state);
  if (f.updatedAfter !== undefined) add((n) => `updated_at > $${n}`, f.updatedAfter);
  if (f.before)
    add(
      (n) => `(created_at < $${n} OR (created_at = $${n} AND id < $${n + 1}))`,
      f.before.createdAt,
      f.before.id,
    );
  values.push(f.limit);
  const cond = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  return {
    text: `SELECT * FROM a2a_tasks ${cond} ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
    values,
  };
}

export function countTasks(owner: string | null): Sql {
  return owner === null
    ? sql('SELECT COUNT(*) AS n FROM a2a_tasks')
    : sql('SELECT COUNT(*) AS n FROM a2a_tasks WHERE owner = $1', owner);
}

export function upsertPushConfig(r: Omit<PushConfigRow, 'created_at'> & { now: number }): Sql {
  return sql(
    `INSERT INTO a2a_push_configs (task_id, id, url, token, auth_scheme, auth_ref, wire_version, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (task_id, id) DO UPDATE SET url = $3, token = $4, auth_scheme = $5, auth_ref = $6, wire_version = $7`,
    r.task_id,
    r.id,
    r.url,
    r.token,
    r.auth_scheme,
    r.auth_ref,
    r.wire_version,
    r.now,
  );
}

export function selectPushConfigs(taskId: string): Sql {
  return sql('SELECT * FROM a2a_push_configs WHERE task_id = $1 ORDER BY created_at, id', taskId);
}

export function selectPushConfig(taskId: string, id: string): Sql {
  return sql('SELECT * FROM a2a_push_configs WHERE task_id = $1 AND id = $2', taskId, id);
}

export function deletePushConfigs(taskId: string, id?: string): Sql {
  return id === undefined
    ? sql('DELETE FROM a2a_push_configs WHERE task_id = $1', taskId)
    : sql('DELETE FROM a2a_push_configs WHERE task_id = $1 AND id = $2', taskId, id);
}

export function selectSigningKeys(now: number): Sql {
  return sql('SELECT * FROM a2a_signing_keys WHERE retire_at > $1 ORDER BY created_at DESC', now);
}

export function insertSigningKey(r: SigningKeyRow): Sql {
  return sql(
    `INSERT INTO a2a_signing_keys (kid, public_jwk, private_ref, created_at, rotate_at, retire_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kid) DO NOTHING`,
    r.kid,
    r.public_jwk,
    r.private_ref,
    r.created_at,
    r.rotate_at,
    r.retire_at,
  );
}
