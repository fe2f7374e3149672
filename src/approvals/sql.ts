import type { ApprovalState } from './port.js';
import type { Sql } from '../store/port.js';

/** Every SQL statement of the approvals module, as pure functions over the one-method DB port. */

/** What a new approval is written with. */
export interface NewApprovalRow {
  id: string;
  action: string;
  reason: string;
  plan: string;
  plan_digest: string;
  task_id: string | null;
  session_id: string | null;
  requested_by: string;
  approvers: string | null;
  correlation_id: string;
  request_event_id: string;
  created_at: number;
  expires_at: number;
}

/** A stored approval: what it was written with, and its decision. */
export interface ApprovalRow extends NewApprovalRow {
  state: ApprovalState;
  decided_at: number | null;
  decided_by: string | null;
  comment: string | null;
  capability: string | null;
  recheck: string | null;
  version: number;
}

export function insertApproval(r: NewApprovalRow): Sql {
  return {
    text: `INSERT INTO approvals (id, state, action, reason, plan, plan_digest, task_id, session_id, requested_by,
             approvers, correlation_id, request_event_id, created_at, expires_at, version)
           VALUES ($1, 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1)`,
    values: [
      r.id,
      r.action,
      r.reason,
      r.plan,
      r.plan_digest,
      r.task_id,
      r.session_id,
      r.requested_by,
      r.approvers,
      r.correlation_id,
      r.request_event_id,
      r.created_at,
      r.expires_at,
    ],
  };
}

export function selectApproval(id: string): Sql {
  return { text: 'SELECT * FROM approvals WHERE id = $1', values: [id] };
}

/**
 * The decision: one conditional UPDATE. Only a pending, unexpired row matches, so of two racing
 * decisions exactly one gets a row back (approvals.test.ts, "two concurrent decisions").
 */
export function decideApproval(d: {
  id: string;
  state: 'approved' | 'rejected';
  now: number;
  by: string;
  comment: string | null;
  capability: string | null;
  recheck: string | null;
}): Sql {
  return {
    text: `UPDATE approvals
              SET state = $2, decided_at = $3, decided_by = $4, comment = $5, capability = $6, recheck = $7,
                  version = version + 1
            WHERE id = $1 AND state = 'pending' AND expires_at > $3
        RETURNING *`,
    values: [d.id, d.state, d.now, d.by, d.comment, d.capability, d.recheck],
  };
}

/** Past-due pending approvals, oldest first; each is then expired by its own conditional UPDATE. */
export function selectDue(now: number, limit: number): Sql {
  return {
    text: `SELECT id FROM approvals WHERE state = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    values: [now, limit],
  };
}

/** Pending approvals that expire within (after, until], soonest first (the `approvals_state_expires` index). */
export function selectExpiring(after: number, until: number, limit: number, minLifetimeMs: number): Sql {
  return {
    text: `SELECT id, action, reason, task_id, requested_by, request_event_id, expires_at FROM approvals
            WHERE state = 'pending' AND expires_at > $1 AND expires_at <= $2
              AND expires_at - created_at > $4
            ORDER BY expires_at, id LIMIT $3`,
    values: [after, until, limit, minLifetimeMs],
  };
}

/** Ends a pending approval now, due or not: the hold it belongs to ended without a decision. */
export function withdrawApproval(id: string, now: number): Sql {
  return {
    text: `UPDATE approvals SET state = 'expired', decided_at = $2, version = version + 1
            WHERE id = $1 AND state = 'pending'
        RETURNING *`,
    values: [id, now],
  };
}

export function expireApproval(id: string, now: number): Sql {
  return {
    text: `UPDATE approvals SET state = 'expired', decided_at = $2, version = version + 1
            WHERE id = $1 AND state = 'pending' AND expires_at <= $2
        RETURNING *`,
    values: [id, now],
  };
}

/** A page of approvals, newest first; `state` filters by the effective state (see view.ts). */
export function listApprovals(f: {
  state?: ApprovalState;
  requestedBy?: string;
  limit: number;
  now: number;
}): Sql {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (f.state === 'pending') where.push(`state = 'pending' AND expires_at > ${param(f.now)}`);
  else if (f.state === 'expired')
    where.push(`(state = 'expired' OR (state = 'pending' AND expires_at <= ${param(f.now)}))`);
  else if (f.state) where.push(`state = ${param(f.state)}`);
  if (f.requestedBy) where.push(`requested_by = ${param(f.requestedBy)}`);
  return {
    text: `SELECT * FROM approvals ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY id DESC LIMIT ${param(f.limit)}`,
    values,
  };
}
