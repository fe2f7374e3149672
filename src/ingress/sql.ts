import type { Sql } from '../store/port.js';

/**
 * Every SQL statement of the ingress module (`ingress_deliveries`, `ingress_runs`), as pure functions
 * over the one-method DB port. `pipeline/deliveries.ts` and `admission/runs.ts` type the rows.
 */

// ── ingress_deliveries: one row per (source, delivery id) the sender delivered ──

/**
 * Records a delivery, or takes one whose admission failed over again (GitHub redeliveries reuse the id);
 * a delivery that is pending or processed stays as it is. One statement, so two replicas racing on the
 * same id cannot both win: no row back for a duplicate.
 */
export function claimDelivery(
  d: {
    source: string;
    deliveryId: string;
    eventId: string;
    tenantId: string;
    eventName: string | null;
    payloadRef: string;
    now: number;
  },
  /** `refused`: an unbound delivery, stored for the record (pipeline/route.ts). */
  status: 'accepted' | 'refused' = 'accepted',
): Sql {
  return {
    text: `INSERT INTO ingress_deliveries (source, delivery_id, event_id, tenant_id, event_name, payload_ref, status, accepted, received_at)
           VALUES ($1, $2, $3, $4, $5, $6, $8, 1, $7)
           ON CONFLICT (source, delivery_id) DO UPDATE SET
             event_id = excluded.event_id, tenant_id = excluded.tenant_id, event_name = excluded.event_name,
             payload_ref = excluded.payload_ref, status = excluded.status, accepted = ingress_deliveries.accepted + 1,
             received_at = excluded.received_at, processed_at = NULL, last_error = NULL
           WHERE ingress_deliveries.status IN ('failed', 'refused')
           RETURNING accepted`,
    values: [d.source, d.deliveryId, d.eventId, d.tenantId, d.eventName, d.payloadRef, d.now, status],
  };
}

export function selectDelivery(source: string, deliveryId: string): Sql {
  return {
    text: 'SELECT * FROM ingress_deliveries WHERE source = $1 AND delivery_id = $2',
    values: [source, deliveryId],
  };
}

export function selectDeliveriesById(deliveryId: string): Sql {
  return {
    text: 'SELECT * FROM ingress_deliveries WHERE delivery_id = $1 ORDER BY source',
    values: [deliveryId],
  };
}

/** Only the delivery that still names this event: a replay may have moved it on. */
export function markDelivery(
  eventId: string,
  status: string,
  processedAt: number | null,
  error: string | null,
): Sql {
  return {
    text: `UPDATE ingress_deliveries SET status = $1, processed_at = $2, last_error = $3 WHERE event_id = $4`,
    values: [status, processedAt, error, eventId],
  };
}

export function reassignDelivery(source: string, deliveryId: string, eventId: string, now: number): Sql {
  return {
    text: `UPDATE ingress_deliveries SET event_id = $1, status = 'accepted', accepted = accepted + 1,
             received_at = $2, processed_at = NULL, last_error = NULL
           WHERE source = $3 AND delivery_id = $4`,
    values: [eventId, now, source, deliveryId],
  };
}

export function purgeDeliveries(before: number): Sql {
  return {
    text: `DELETE FROM ingress_deliveries WHERE status = 'processed' AND received_at < $1 RETURNING delivery_id`,
    values: [before],
  };
}

/** The dead-letter list: failed deliveries, newest first; `source` '' means every source. */
export function selectFailedDeliveries(source: string, limit: number): Sql {
  return {
    text: `SELECT d.source, d.delivery_id, d.event_id, d.event_name, d.accepted, d.last_error, d.received_at, d.processed_at
             FROM ingress_deliveries d
            WHERE d.status = 'failed' AND ($1 = '' OR d.source = $1)
            ORDER BY d.received_at DESC, d.delivery_id
            LIMIT $2`,
    values: [source, limit],
  };
}

// ── ingress_runs: admitted runs, waiting → launching → active → done (or failed) ──

/**
 * PostgreSQL: admissions take turns inside their transaction, so the budget and concurrency counts they
 * read stay true until they commit (SQLite's BEGIN IMMEDIATE already serialises writers).
 */
export function lockAdmission(key: number): Sql {
  return { text: 'SELECT pg_advisory_xact_lock($1)', values: [key] };
}

export function selectWaitingRun(triggerId: string, key: string): Sql {
  return {
    text: `SELECT * FROM ingress_runs WHERE trigger_id = $1 AND run_key = $2 AND state = 'waiting'`,
    values: [triggerId, key],
  };
}

export function selectActiveRun(triggerId: string, key: string): Sql {
  return {
    text: `SELECT 1 AS x FROM ingress_runs WHERE trigger_id = $1 AND run_key = $2 AND state IN ('launching', 'active')`,
    values: [triggerId, key],
  };
}

export function insertRun(r: {
  id: string;
  triggerId: string;
  key: string;
  tenantId: string;
  eventId: string;
  dueAt: number;
  now: number;
  fetched: string | null;
}): Sql {
  return {
    text: `INSERT INTO ingress_runs (id, trigger_id, run_key, tenant_id, state, event_id, due_at, created_at, updated_at, fetched)
           VALUES ($1, $2, $3, $4, 'waiting', $5, $6, $7, $7, $8)`,
    values: [r.id, r.triggerId, r.key, r.tenantId, r.eventId, r.dueAt, r.now, r.fetched],
  };
}

/** Newest wins, by event id (time-ordered ULIDs): no row back when the run carries a newer event. */
export function replaceRunEvent(runId: string, eventId: string, now: number, fetched: string | null): Sql {
  return {
    text: `UPDATE ingress_runs SET event_id = $1, updated_at = $2, fetched = $4 WHERE id = $3 AND state = 'waiting' AND event_id < $1 RETURNING id`,
    values: [eventId, now, runId, fetched],
  };
}

export function countTriggerRunsSince(triggerId: string, since: number): Sql {
  return {
    text: `SELECT COUNT(*) AS n FROM ingress_runs WHERE trigger_id = $1 AND created_at >= $2 AND state <> 'failed'`,
    values: [triggerId, since],
  };
}

export function countTenantRunsSince(tenantId: string, since: number): Sql {
  return {
    text: `SELECT COUNT(*) AS n FROM ingress_runs WHERE tenant_id = $1 AND created_at >= $2 AND state <> 'failed'`,
    values: [tenantId, since],
  };
}

export function countActiveRuns(triggerId: string): Sql {
  return {
    text: `SELECT COUNT(*) AS n FROM ingress_runs WHERE trigger_id = $1 AND state IN ('launching', 'active')`,
    values: [triggerId],
  };
}

/** Waiting runs whose window closed and whose key has no active run, oldest first. */
export function selectDueRuns(now: number, limit: number): Sql {
  return {
    text: `SELECT * FROM ingress_runs w
           WHERE w.state = 'waiting' AND w.due_at <= $1
             AND NOT EXISTS (SELECT 1 FROM ingress_runs a
                             WHERE a.trigger_id = w.trigger_id AND a.run_key = w.run_key AND a.state IN ('launching', 'active'))
           ORDER BY w.due_at, w.id LIMIT $2`,
    values: [now, limit],
  };
}

/** The partial unique index refuses it when the key already has an active run. */
export function claimRun(runId: string, now: number): Sql {
  return {
    text: `UPDATE ingress_runs SET state = 'launching', updated_at = $1 WHERE id = $2 AND state = 'waiting' RETURNING *`,
    values: [now, runId],
  };
}

export function setRunState(
  runId: string,
  state: string,
  now: number,
  taskId: string | null,
  error: string | null,
): Sql {
  return {
    text: `UPDATE ingress_runs SET state = $1, updated_at = $2, task_id = COALESCE($3, task_id), error = $4 WHERE id = $5`,
    values: [state, now, taskId, error, runId],
  };
}

export function finishTaskRun(taskId: string, now: number): Sql {
  return {
    text: `UPDATE ingress_runs SET state = 'done', updated_at = $1 WHERE task_id = $2 AND state = 'active' RETURNING id`,
    values: [now, taskId],
  };
}

export function selectRun(runId: string): Sql {
  return { text: 'SELECT * FROM ingress_runs WHERE id = $1', values: [runId] };
}

/** Runs in `launching` since before `before`: their launcher may have died mid-launch. */
export function selectStaleLaunches(before: number, limit: number): Sql {
  return {
    text: `SELECT * FROM ingress_runs WHERE state = 'launching' AND updated_at < $1 ORDER BY updated_at LIMIT $2`,
    values: [before, limit],
  };
}

/** Takes a stale launching run over (its lease starts again), so two recovering launchers do not both act. */
export function retakeLaunch(runId: string, seenAt: number, now: number): Sql {
  return {
    text: `UPDATE ingress_runs SET updated_at = $1 WHERE id = $2 AND state = 'launching' AND updated_at = $3 RETURNING *`,
    values: [now, runId, seenAt],
  };
}

export function failStaleLaunches(before: number, now: number): Sql {
  return {
    text: `UPDATE ingress_runs SET state = 'failed', updated_at = $1, error = 'interrupted while launching'
           WHERE state = 'launching' AND updated_at < $2 RETURNING event_id`,
    values: [now, before],
  };
}

// ── ingress_revisions: the newest revision admitted per resource (admission/order.ts) ──

export function selectRevision(source: string, resource: string): Sql {
  return {
    text: 'SELECT revision_at, tag, event_id FROM ingress_revisions WHERE source = $1 AND resource = $2',
    values: [source, resource],
  };
}

/** Moves the resource's revision forward, never back (a racing older write changes nothing). */
export function upsertRevision(r: {
  source: string;
  resource: string;
  at: number;
  tag: string | null;
  eventId: string;
  now: number;
}): Sql {
  return {
    text: `INSERT INTO ingress_revisions (source, resource, revision_at, tag, event_id, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (source, resource) DO UPDATE SET
             revision_at = excluded.revision_at, tag = excluded.tag, event_id = excluded.event_id,
             updated_at = excluded.updated_at
           WHERE excluded.revision_at >= ingress_revisions.revision_at`,
    values: [r.source, r.resource, r.at, r.tag, r.eventId, r.now],
  };
}

/** Resources not seen since `before`: a sender that late is sending new work, as with deliveries. */
export function purgeRevisions(before: number): Sql {
  return {
    text: 'DELETE FROM ingress_revisions WHERE updated_at < $1 RETURNING resource',
    values: [before],
  };
}

// ── ingress_integrations: sources whose credential the provider refused (admission/revoked.ts) ──

export function selectIntegration(source: string): Sql {
  return {
    text: 'SELECT source, status, reason, since, event_id FROM ingress_integrations WHERE source = $1',
    values: [source],
  };
}

/** No row back when the source is already marked revoked. */
export function markRevoked(r: { source: string; reason: string; since: number; eventId: string }): Sql {
  return {
    text: `INSERT INTO ingress_integrations (source, status, reason, since, event_id) VALUES ($1, 'revoked', $2, $3, $4)
           ON CONFLICT (source) DO NOTHING RETURNING source`,
    values: [r.source, r.reason, r.since, r.eventId],
  };
}

export function clearRevoked(source: string): Sql {
  return { text: 'DELETE FROM ingress_integrations WHERE source = $1 RETURNING since', values: [source] };
}
