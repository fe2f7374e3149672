import type { Db } from '../../store/port.js';
import * as q from '../sql.js';
import { prefix } from '../../text/index.js';

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
  const rows = await db.query<RunRow>(q.selectWaitingRun(triggerId, key));
  return rows[0];
}

export async function hasActive(db: Db, triggerId: string, key: string): Promise<boolean> {
  const rows = await db.query(q.selectActiveRun(triggerId, key));
  return rows.length > 0;
}

export async function insertRun(
  db: Db,
  r: Omit<Parameters<typeof q.insertRun>[0], 'fetched'> & { fetched?: Record<string, string> | undefined },
): Promise<void> {
  await db.query(q.insertRun({ ...r, fetched: r.fetched ? JSON.stringify(r.fetched) : null }));
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
  const rows = await db.query(
    q.replaceRunEvent(runId, eventId, now, fetched ? JSON.stringify(fetched) : null),
  );
  return rows.length > 0;
}

/** Runs admitted for a trigger since `since` (the start of the UTC day): what `budget.per_day` counts. */
export async function countSince(db: Db, triggerId: string, since: number): Promise<number> {
  const rows = await db.query<{ n: number }>(q.countTriggerRunsSince(triggerId, since));
  return Number(rows[0]?.n ?? 0);
}

/** Runs admitted for a tenant since `since`, across its triggers: what `loop.tenant_runs_per_day` counts. */
export async function countTenantSince(db: Db, tenantId: string, since: number): Promise<number> {
  const rows = await db.query<{ n: number }>(q.countTenantRunsSince(tenantId, since));
  return Number(rows[0]?.n ?? 0);
}

export async function countActive(db: Db, triggerId: string): Promise<number> {
  const rows = await db.query<{ n: number }>(q.countActiveRuns(triggerId));
  return Number(rows[0]?.n ?? 0);
}

/** Waiting runs whose window closed and whose key has no active run, oldest first. */
export async function dueRuns(db: Db, now: number, limit: number): Promise<RunRow[]> {
  return db.query<RunRow>(q.selectDueRuns(now, limit));
}

/** Takes a waiting run for launching; false when another worker took it first (or its key became active). */
export async function claimRun(db: Db, runId: string, now: number): Promise<RunRow | undefined> {
  try {
    const rows = await db.query<RunRow>(q.claimRun(runId, now));
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
  await db.query(
    q.setRunState(
      runId,
      state,
      now,
      extra.taskId ?? null,
      extra.error === undefined ? null : prefix(extra.error, 500),
    ),
  );
}

/** A task ended: its run is done and the key's follow-up may start. */
export async function finishTask(db: Db, taskId: string, now: number): Promise<number> {
  const rows = await db.query(q.finishTaskRun(taskId, now));
  return rows.length;
}

export async function getRun(db: Db, runId: string): Promise<RunRow | undefined> {
  return (await db.query<RunRow>(q.selectRun(runId)))[0];
}

/** Runs left in `launching` longer than a launch takes: their launcher may have died mid-launch. */
export async function staleLaunches(db: Db, before: number, limit: number): Promise<RunRow[]> {
  return db.query<RunRow>(q.selectStaleLaunches(before, limit));
}

/** Takes a stale run over; undefined when another launcher took it (or it moved on) first. */
export async function retakeLaunch(db: Db, run: RunRow, now: number): Promise<RunRow | undefined> {
  return (await db.query<RunRow>(q.retakeLaunch(run.id, Number(run.updated_at), now)))[0];
}

/**
 * The fallback for a task service that cannot say what became of a launch (`findLaunch`): runs left in
 * `launching` are failed (never launched twice) and their deliveries may be redelivered; returns the
 * accepted event ids concerned.
 */
export async function failStaleLaunches(db: Db, before: number, now: number): Promise<string[]> {
  const rows = await db.query<{ event_id: string }>(q.failStaleLaunches(before, now));
  return rows.map((r) => r.event_id);
}
