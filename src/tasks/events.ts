import type { EnvelopeInput, EventType } from '../envelope/index.js';
import type { TaskRow } from './sql.js';

/**
 * The event for a task fact. Every task event carries the launch cause as its causation and the
 * cause's correlation, tenant and lineage (stored on the row at launch, as `causedBy` computed them),
 * so `GET /v1/events?correlation_id=` shows the webhook, the task and everything the agent did in one chain.
 */
export function taskEvent(
  row: TaskRow,
  type: EventType,
  summary: Record<string, unknown> = {},
): EnvelopeInput {
  return {
    type,
    tenant_id: row.tenant_id,
    environment: row.environment,
    correlation_id: row.correlation_id,
    causation_id: row.cause_event_id,
    execution: { task_id: row.id, session_id: row.session_id },
    lineage: { hop_count: Number(row.hop_count), depth: Number(row.depth) },
    runtime: { kind: row.runtime },
    actor: { user_id: row.owner },
    redacted_summary: {
      task_id: row.id,
      state: row.state,
      title: row.title,
      owner: row.owner,
      trigger_id: row.trigger_id,
      action: actionType(row),
      ...summary,
    },
  };
}

function actionType(row: TaskRow): string {
  try {
    const a = JSON.parse(row.action) as { type?: unknown };
    return typeof a.type === 'string' ? a.type : 'unknown';
  } catch {
    return 'unknown';
  }
}
