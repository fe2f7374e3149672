import type { Envelope } from '../envelope/index.js';
import type { Db } from '../store/port.js';
import type { Principal } from '../kernel/module.js';

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
  /**
   * Instead of `cause`: appends the event that carries the intent inside the gate's own decision
   * transaction, so the event, the request and the answer commit together (the hook route: one commit
   * per tool call). Called once, after the gate's reads; it must use only the port it is given.
   */
  record?: (tx: Db) => Promise<Envelope>;
}

export interface GateService {
  evaluate(intent: GateIntent, ctx: GateContext): Promise<GateDecision>;
  /**
   * The re-check when a person approved `planDigest`: evaluates under the current policy, and where the
   * policy still says require_approval, that approval satisfies it (allow + capability) as long as the
   * plan is the one approved. Never creates another approval.
   */
  evaluateApproved?(intent: GateIntent, ctx: GateContext, planDigest: string): Promise<GateDecision>;
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
  /** The gate's re-check on approval: `no_capability` means the current policy no longer allows the plan. */
  recheck?: { outcome: string; reason_code: string } | null;
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

/** The plan an approval freezes for an intent: what would run, nothing about who or why. */
export function approvalPlan(intent: GateIntent): ApprovalRequest['plan'] {
  return {
    tool: intent.tool,
    input: intent.input,
    ...(intent.action !== undefined ? { action: intent.action } : {}),
    ...(intent.resource !== undefined ? { resource: intent.resource } : {}),
  };
}

export interface ApprovalService {
  request(req: ApprovalRequest): Promise<ApprovalView>;
  get(id: string): Promise<ApprovalView | undefined>;
  /** Resolves when the approval leaves `pending` or `timeoutMs` passes; returns its state then. */
  wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalView | undefined>;
  decide(id: string, decision: 'approve' | 'reject', by: Principal, comment?: string): Promise<ApprovalView>;
  /** Signed one-time links for a phone: a GET shows the confirmation page, only its POST decides. */
  approvalLinks?(
    id: string,
    baseUrl: string,
  ): Promise<{ pageUrl: string; approveUrl: string; rejectUrl: string }>;
  /** Pending approvals that expire within (after, until], soonest first: notify re-announces them. */
  expiring?(after: number, until: number, limit: number): Promise<ExpiringApproval[]>;
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

/** A2A-aligned task states (docs/ARCHITECTURE.md, task lifecycle). */
export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected';

export interface TaskView {
  id: string;
  state: TaskState;
  owner: string | null;
  runtime: string | null;
  session_id: string | null;
  correlation_id: string;
  title: string;
  created_at: string;
  updated_at: string;
  last_activity_at: string;
  steps: number;
  /** Loop guard carried by everything the task causes. */
  lineage: { hop_count: number; depth: number };
}

/** What admission asks the tasks module to do for an admitted webhook (or a person, or a resume). */
export interface LaunchRequest {
  trigger_id: string;
  action:
    | {
        type: 'command';
        command: string[];
        cwd?: string;
        env?: Record<string, string>;
        max_runtime_seconds?: number;
        max_steps?: number;
        runtime?: string;
      }
    | { type: 'http'; url: string; headers?: Record<string, string>; body_template?: unknown }
    | { type: 'notify'; channels?: string[] };
  /** Trusted fields the action's arguments may be templated from. */
  trusted: Record<string, string>;
  /** Untrusted text (the webhook payload): passed to the agent as data (a file or stdin), never as arguments. */
  untrusted: { ref: string; digest: string; text: string };
  owner?: string;
  title: string;
  cause: Envelope;
}

export interface TaskService {
  launch(req: LaunchRequest): Promise<TaskView>;
  get(id: string): Promise<TaskView | undefined>;
  /** Records activity from a hook or tool call: updates last activity and the step counter. */
  touch(taskId: string, opts?: { step?: boolean; session_id?: string; runtime?: string }): Promise<void>;
  resume(id: string, message: string, by: Principal): Promise<TaskView>;
}

/** Queues a message for a configured destination (a channel name) in the caller's transaction. */
export interface DeliveryPort {
  enqueue(
    tx: import('../store/port.js').Db,
    req: {
      /** The event that causes the delivery: its id is the idempotency key (`webhook-id`, provider ids). */
      eventId: string;
      destination: string;
      /** A `Message` of `src/channels/channel.ts`. */
      message: unknown;
      /** `high`: the priority lane (blocked, awaiting approval, failed): retried until delivered. */
      priority?: 'normal' | 'high';
    },
  ): Promise<{ id: string }>;
}

/**
 * A permission prompt no rule decided (Claude Code / Codex `PermissionRequest`), offered to the phone.
 * Set by the signals module, which knows whether the owner is away and what context a person needs.
 */
export interface PhoneApprovals {
  /**
   * When the owner is away (and prompts may go to the phone), creates an approval for the prompt,
   * which notify announces with approve/deny buttons, and says how long to hold the hook for it (never
   * more than `maxHoldMs`). Undefined: the prompt stays at the desk, answered with no decision.
   */
  escalate(req: PhoneEscalation): Promise<{ approval_id: string; hold_ms: number } | undefined>;
}

export interface PhoneEscalation {
  intent: GateIntent;
  principal: Principal;
  /** The `agent.permission.requested` envelope: the approval is caused by it. */
  cause: Envelope;
  /** The hook's own body (cwd, session, transcript path): context for the person. */
  raw: Record<string, unknown>;
  /** What the runtime's timeout and the bridge's deadline leave for holding the hook. */
  maxHoldMs: number;
}
