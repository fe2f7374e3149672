import type { ApprovalService, ApprovalState, ApprovalView } from '../../approvals/port.js';
import type { GateContext, GateDecision, GateIntent, GateService } from '../../gate/port.js';

/** Stand-ins for the gate and approvals modules, so the route is tested on its own. */

export function gateDecision(
  decision: GateDecision['decision'],
  extra: Partial<GateDecision> = {},
): GateDecision {
  return {
    decision,
    reason_code: extra.reason_code ?? `TEST_${decision.toUpperCase()}`,
    policy_revision: 'rev_test',
    plan_digest: 'sha256:0000',
    constraints: {},
    matched_rules: [{ id: 'test-rule', decision }],
    ...extra,
  };
}

export class FakeGate implements GateService {
  calls: Array<{ intent: GateIntent; ctx: GateContext }> = [];
  constructor(public answer: GateDecision | Error) {}

  async evaluate(intent: GateIntent, ctx: GateContext): Promise<GateDecision> {
    this.calls.push({ intent, ctx });
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

export function approvalView(
  id: string,
  state: ApprovalState,
  extra: Partial<ApprovalView> = {},
): ApprovalView {
  return {
    id,
    state,
    action: 'Bash',
    reason: 'test',
    plan_digest: 'sha256:0000',
    task_id: null,
    requested_by: 'bot',
    created_at: new Date(0).toISOString(),
    expires_at: new Date(3_600_000).toISOString(),
    decided_at: state === 'pending' ? null : new Date(1000).toISOString(),
    decided_by: state === 'pending' ? null : 'me',
    comment: null,
    ...extra,
  };
}

/** `outcome` is what `wait` resolves with after `afterMs` (or at once, still pending, when it is null). */
export class FakeApprovals implements ApprovalService {
  waits: Array<{ id: string; timeoutMs: number }> = [];
  constructor(
    public outcome: ApprovalView | null,
    public afterMs = 0,
  ) {}

  async wait(id: string, timeoutMs: number): Promise<ApprovalView | undefined> {
    this.waits.push({ id, timeoutMs });
    await new Promise((r) => setTimeout(r, this.afterMs));
    return this.outcome ?? approvalView(id, 'pending');
  }

  async request(): Promise<ApprovalView> {
    throw new Error('not used by the hook route');
  }
  async get(): Promise<ApprovalView | undefined> {
    return undefined;
  }
  async decide(): Promise<ApprovalView> {
    throw new Error('not used by the hook route');
  }
}
