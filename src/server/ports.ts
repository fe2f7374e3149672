import type { Envelope } from '../envelope/index.js';
import type { Principal } from './module.js';

/**
 * Services one module offers another, by interface only: the module that implements one sets it on
 * `Services` in its `start()`, and a consumer looks it up when it needs it (and answers a clear error
 * when the providing module is not running). This keeps the dependency arrows pointing inward.
 */

/** The decision contract of CONTRACT.md. */
export interface GateDecision {
  decision: 'allow' | 'deny' | 'require_approval' | 'defer' | 'modify';
  reason_code: string;
  reason?: string;
  policy_revision: string | null;
  plan_digest: string;
  capability?: { id: string; expires_at: string; token: string };
  constraints: Record<string, unknown>;
  matched_rules: { id: string; decision: string }[];
  approval_id?: string;
  input?: Record<string, unknown>;
  /** Set when a low-risk intent was let through because the policy could not be evaluated. */
  tags?: string[];
}

/** A tool intent as `POST /v1/gate/evaluate` takes it. */
export interface GateIntent {
  tool: string;
  input: Record<string, unknown>;
  action?: string;
  resource?: string;
  task_id?: string;
  session_id?: string;
  runtime?: string;
  /** The envelope type that carries the intent (`agent.tool.requested`, `agent.permission.requested`). */
  event_type?: string;
}

export interface GateContext {
  principal: Principal;
  /** The event that carried the intent, already in the log: the decision is caused by it. */
  cause?: Envelope;
}

export interface GateService {
  evaluate(intent: GateIntent, ctx: GateContext): Promise<GateDecision>;
}

export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'expired';

export interface ApprovalView {
  id: string;
  state: ApprovalState;
  action: string;
  reason: string;
  plan_digest: string;
  task_id: string | null;
  requested_by: string;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  comment: string | null;
  /** Issued when approved and the gate's re-check under the current policy allowed it. */
  capability?: { id: string; expires_at: string; token: string };
}

export interface ApprovalRequest {
  action: string;
  reason: string;
  /** The frozen plan: its digest is what an approver approves, nothing else. */
  plan: { tool: string; input: Record<string, unknown>; action?: string; resource?: string };
  task_id?: string;
  session_id?: string;
  requested_by: Principal;
  ttl_ms?: number;
  cause?: Envelope;
}

export interface ApprovalService {
  request(req: ApprovalRequest): Promise<ApprovalView>;
  get(id: string): Promise<ApprovalView | undefined>;
  /** Resolves when the approval leaves `pending` or `timeoutMs` passes; returns its state then. */
  wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalView | undefined>;
  decide(id: string, decision: 'approve' | 'reject', by: Principal, comment?: string): Promise<ApprovalView>;
}
