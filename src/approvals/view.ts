import type { ApprovalPlan, ApprovalState, ApprovalView } from './port.js';
import type { ApprovalRow } from './sql.js';

/** What the gate's re-check said when the approval was granted (stored with the decision). */
export type Recheck =
  | { outcome: 'capability'; decision: string; reason_code: string; policy_revision: string | null }
  | { outcome: 'no_capability'; decision: string | null; reason_code: string; policy_revision: string | null }
  | { outcome: 'skipped'; reason_code: 'GATE_NOT_RUNNING' };

/** The port's view plus what an approver needs to see: the plan itself and who may decide. */
export interface ApprovalRecord extends ApprovalView {
  session_id: string | null;
  plan: ApprovalPlan;
  approvers: string[] | null;
  recheck: Recheck | null;
  version: number;
}

/**
 * A pending row past its expiry reads as `expired` before the worker records it, so no caller ever
 * sees "pending" for something that can no longer be decided (a decision on it answers 410).
 */
export function effectiveState(row: Pick<ApprovalRow, 'state' | 'expires_at'>, now: number): ApprovalState {
  return row.state === 'pending' && Number(row.expires_at) <= now ? 'expired' : row.state;
}

function iso(ms: number | null): string | null {
  return ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
}

export function toRecord(row: ApprovalRow, now: number): ApprovalRecord {
  const record: ApprovalRecord = {
    id: row.id,
    state: effectiveState(row, now),
    action: row.action,
    reason: row.reason,
    plan_digest: row.plan_digest,
    plan: JSON.parse(row.plan) as ApprovalPlan,
    task_id: row.task_id,
    correlation_id: row.correlation_id,
    session_id: row.session_id,
    requested_by: row.requested_by,
    approvers: row.approvers ? (JSON.parse(row.approvers) as string[]) : null,
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at)!,
    decided_at: iso(row.decided_at),
    decided_by: row.decided_by,
    comment: row.comment,
    recheck: row.recheck ? (JSON.parse(row.recheck) as Recheck) : null,
    version: Number(row.version),
  };
  if (row.capability) record.capability = JSON.parse(row.capability) as ApprovalRecord['capability'] & object;
  return record;
}
