import type { Envelope } from '../envelope/index.js';
import type { Principal } from '../kernel/module.js';
import { port } from '../kernel/port.js';

export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'expired';

export interface ApprovalView {
  id: string;
  state: ApprovalState;
  action: string;
  reason: string;
  plan_digest: string;
  task_id: string | null;
  /** The chain of its request event (the intent it was asked for): a trace follows it (src/effects). */
  correlation_id?: string;
  requested_by: string;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  comment: string | null;
  /** Issued when approved and the gate's re-check under the current policy allowed it. */
  capability?: { id: string; expires_at: string; token: string };
  /** The gate's re-check on approval: `no_capability` means the current policy no longer allows the plan. */
  recheck?: { outcome: string; reason_code: string } | null;
}

/** The frozen plan: its digest is what an approver approves, nothing else. */
export interface ApprovalPlan {
  tool: string;
  input: Record<string, unknown>;
  action?: string;
  resource?: string;
}

export interface ApprovalRequest {
  action: string;
  reason: string;
  plan: ApprovalPlan;
  task_id?: string;
  session_id?: string;
  requested_by: Principal;
  ttl_ms?: number;
  cause?: Envelope;
}

/**
 * What an approved plan is checked against before a capability is issued: the policy serving now. The
 * gate supplies it (`useRecheck` at its start), so approvals never import the gate; without one, an
 * approval is approved with no capability (`GATE_NOT_RUNNING`).
 */
export interface PlanRecheck {
  /** Decides the approved plan again; only an `allow` for the same digest with a capability grants one. */
  (
    plan: ApprovalPlan & { task_id?: string; session_id?: string },
    asker: Principal,
    frozenDigest: string,
  ): Promise<{
    decision: string;
    reason_code: string;
    policy_revision: string;
    plan_digest: string;
    capability?: { id: string; expires_at: string; token: string };
  }>;
}

/** Where a decision taken with a key came from: the API or CLI (`key`), or the web console. */
export type DecisionVia = 'key' | 'console';

/** An approval with what an approver reads before deciding: the frozen plan and its session. */
export interface ApprovalDetail extends ApprovalView {
  plan: ApprovalPlan;
  session_id: string | null;
}

export interface ApprovalListFilter {
  state?: ApprovalState;
  limit: number;
}

export interface ApprovalService {
  request(req: ApprovalRequest): Promise<ApprovalView>;
  get(id: string): Promise<ApprovalView | undefined>;
  /** Resolves when the approval leaves `pending` or `timeoutMs` passes; returns its state then. */
  wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalView | undefined>;
  /** `via` is recorded in the decision's event (`key` by default), so a reader can tell where it came from. */
  decide(
    id: string,
    decision: 'approve' | 'reject',
    by: Principal,
    comment?: string,
    via?: DecisionVia,
  ): Promise<ApprovalView>;
  /**
   * Ends a pending approval at once as `expired` (with its event, `reason` in its summary): its hold
   * ended without a decision (the gateway is stopping). False when it was no longer pending.
   */
  withdraw?(id: string, reason: string): Promise<boolean>;
  /** The newest approvals first (the console's inbox and decided list). */
  list?(filter: ApprovalListFilter): Promise<ApprovalDetail[]>;
  /** Signed one-time links for a phone: a GET shows the confirmation page, only its POST decides. */
  approvalLinks?(
    id: string,
    baseUrl: string,
  ): Promise<{ pageUrl: string; approveUrl: string; rejectUrl: string }>;
  /** Sets (or, with undefined, clears) the re-check an approval runs before it grants a capability. */
  useRecheck?(check: PlanRecheck | undefined): void;
  /**
   * Pending approvals that expire within (after, until], soonest first, and that were asked for longer
   * than `minLifetimeMs` in all: notify re-announces them.
   */
  expiring?(after: number, until: number, limit: number, minLifetimeMs?: number): Promise<ExpiringApproval[]>;
}

/** What a reminder of a soon-expiring approval says, and the request event it is caused by. */
export interface ExpiringApproval {
  id: string;
  action: string;
  reason: string;
  task_id: string | null;
  requested_by: string;
  request_event_id: string;
  /** Milliseconds since the epoch. */
  expires_at: number;
}

/**
 * How long an `ask_approval`'s fields may be, in characters: one fact for `POST /v1/approvals`, `/mcp`
 * and `switchboard mcp`, so a model sees the same caps in the tool schema that HTTP enforces.
 */
export const ASK_LIMITS = { action: 500, reason: 4000, payload_json: 256 * 1024 } as const;

/** Approvals (src/approvals/module.ts provides it). */
export const approvalsPort = port<ApprovalService>('approvals');
