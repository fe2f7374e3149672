import type { Db } from '../../store/port.js';

/**
 * Admitted runs. `waiting`: admitted, not launched (its window is open, a run for its key is active, the
 * concurrency budget is full, or no task service runs). `launching` → `active` → `done`, or `failed`.
 * The partial unique indexes keep one waiting and one active run per (trigger, key), across replicas.
 */
export type RunState = 'waiting' | 'launching' | 'active' | 'done' | 'failed';

export interface RunRow {
  id: string;
  trigger_id: string;
  run_key: string;
  tenant_id: string;
  state: RunState;
  event_id: string;
  due_at: number;
  task_id: string | null;
  error: string | null;
  /** JSON of the trusted facts a trigger's `fetch` re-read for the carried delivery; null without one. */
  fetched: string | null;
  created_at: number;
  updated_at: number;
}

export async function findWaiting(db: Db, triggerId: string, key: string): Promise<RunRow | undefined> {
  const rows = await db.query<RunRow>({
    text: `SELECT * FROM ingress_runs WHERE trigger_id = $1 AND run_key = $2 AND state = 'waiting'`,
    values: [triggerId, key],
  });
  return rows[0];
}

export async function hasActive(db: Db, triggerId: string, key: string): Promise<boolean> {
  const rows = await db.query({
    text: `SELECT 1 AS x FROM ingress_runs WHERE trigger_id = $1 AND run_key = $2 AND state IN ('launching', 'active')`,
    values: [triggerId, key],
  });
  return rows.length > 0;
}

export async function insertRun(
  db: Db,
  r: {
    id: string;
    triggerId: string;
    key: string;
    tenantId: string;
    eventId: string;
    dueAt: number;
    now: number;
    fetched?: Record<string, string> | undefined;
  },
): Promise<void> {
  await db.query({
    text: `INSERT INTO ingress_runs (id, trigger_id, run_key, tenant_id, state, event_id, due_at, created_at, updated_at, fetched)
           VALUES ($1, $2, $3, $4, 'waiting', $5, $6, $7, $7, $8)`,
    values: [
      r.id,
      r.triggerId,
      r.key,
      r.tenantId,
      r.eventId,
      r.dueAt,
      r.now,
      r.fetched ? JSON.stringify(r.fetched) : null,
    ],
  });
}

/**
 * Newest wins: the waiting run carries the latest delivery. Event ids are time-ordered ULIDs, and the
 * relay admits different deliveries concurrently, so "newest" is by id, not by who got here first.
 * Returns false when the waiting run already carries a newer event.
 */
export async function replaceEvent(
  db: Db,
  runId: string,
  eventId: string,
  now: number,
  fetched?: Record<string, string>,
): Promise<boolean> {
  const rows = await db.query({
    text: `UPDATE ingress_runs SET event_id = $1, updated_at = $2, fetched = $4 WHERE id = $3 AND state = 'waiting' AND event_id < $1 RETURNING id`,
    values: [eventId, now, runId, fetched ? JSON.stringify(fetched) : null],
  });
  return rows.length > 0;
}

/** Runs admitted for a trigger since `since` (the start of the UTC day): what `budget.per_day` counts. */
export async function countSince(db: Db, triggerId: string, since: number): Promise<number> {
  const rows = await db.query<{ n: number }>({
    text: `SELECT COUNT(*) AS n FROM ingress_runs WHERE trigger_id = $1 AND created_at >= $2 AND state <> 'failed'`,
    values: [triggerId, since],
  });
  return Number(rows[0]?.n ?? 0);
}

/** Runs admitted for a tenant since `since`, across its triggers: what `loop.tenant_runs_per_day` counts. */
export async function countTenantSince(db: Db, tenantId: string, since: number): Promise<number> {
  const rows = await db.query<{ n: number }>({
    text: `SELECT COUNT(*) AS n FROM ingress_runs WHERE tenant_id = $1 AND created_at >= $2 AND state <> 'failed'`,
    values: [tenantId, since],
  });
  return Number(rows[0]?.n ?? 0);
}

export async function countActive(db: Db, triggerId: string): Promise<number> {
  const rows = await db.query<{ n: number }>({
    text: `SELECT COUNT(*) AS n FROM ingress_runs WHERE trigger_id = $1 AND state IN ('launching', 'active')`,
    values: [triggerId],
  });
  return Number(rows[0]?.n ?? 0);
}

/** Waiting runs whose window closed and whose key has no active run, oldest first. */
export async function dueRuns(db: Db, now: number, limit: number): Promise<RunRow[]> {
  return db.query<RunRow>({
    text: `SELECT * FROM ingress_runs w
           WHERE w.state = 'waiting' AND w.due_at <= $1
             AND NOT EXISTS (SELECT 1 FROM ingress_runs a
                             WHERE a.trigger_id = w.trigger_id AND a.run_key = w.run_key AND a.state IN ('launching', 'active'))
           ORDER BY w.due_at, w.id LIMIT $2`,
    values: [now, limit],
  });
}

/** Takes a waiting run for launching; false when another worker took it first (or its key became active). */
export async function claimRun(db: Db, runId: string, now: number): Promise<RunRow | undefined> {
  try {
    const rows = await db.query<RunRow>({
      text: `UPDATE ingress_runs SET state = 'launching', updated_at = $1 WHERE id = $2 AND state = 'waiting' RETURNING *`,
      values: [now, runId],
    });
    return rows[0];
  } catch {
    // The partial unique index refused a second active run for the key: another replica launched one.
    return undefined;
  }
}

export async function setRunState(
  db: Db,
  runId: string,
  state: RunState,
  now: number,
  extra: { taskId?: string; error?: string } = {},
): Promise<void> {
  await db.query({
    text: `UPDATE ingress_runs SET state = $1, updated_at = $2, task_id = COALESCE($3, task_id), error = $4 WHERE id = $5`,
    values: [state, now, extra.taskId ?? null, extra.error?.slice(0, 500) ?? null, runId],
  });
}

/** A task ended: its run is done and the key's follow-up may start. */
export async function finishTask(db: Db, taskId: string, now: number): Promise<number> {
  const rows = await db.query({
    text: `UPDATE ingress_runs SET state = 'done', updated_at = $1 WHERE task_id = $2 AND state = 'active' RETURNING id`,
    values: [now, taskId],
  });
  return rows.length;
}

export async function getRun(db: Db, runId: string): Promise<RunRow | undefined> {
  return (await db.query<RunRow>({ text: 'SELECT * FROM ingress_runs WHERE id = $1', values: [runId] }))[0];
}

/**
 * Runs left in `launching` by a process that died mid-launch. Whether the task started is unknown and a
 * launch has no idempotency key, so they are failed (never launched twice) and their deliveries may be
 * redelivered; returns the accepted event ids concerned.
 */
export async function failStaleLaunches(db: Db, before: number, now: number): Promise<string[]> {
  const rows = await db.query<{ event_id: string }>({
    text: `UPDATE ingress_runs SET state = 'failed', updated_at = $1, error = 'interrupted while launching'
           WHERE state = 'launching' AND updated_at < $2 RETURNING event_id`,
    values: [now, before],
  });
  return rows.map((r) => r.event_id);
}
