import { issueCapability } from './capability.js';
import type { CompiledPolicy } from './compile.js';
import { type Evaluation, evaluateWithTrace } from './evaluate.js';
import type { GateContext, Intent } from './types.js';

/**
 * The re-check when an approval is granted: the intent is decided again under the policy serving now,
 * and only if the plan is still the one the approver saw (`frozen_plan_digest`) and the policy still
 * asks for approval does it become an allow with a capability. A policy that now denies or defers
 * wins over the approval; an allow stays an allow. The approvals module sets `approval_id`.
 */
export function evaluateApproved(
  compiled: CompiledPolicy | undefined,
  intent: Intent,
  ctx: GateContext,
  frozen_plan_digest: string,
): Evaluation {
  const evaluation = evaluateWithTrace(compiled, intent, ctx);
  const d = evaluation.decision;
  if (d.plan_digest !== frozen_plan_digest) {
    const { capability: _dropped, input: _input, ...rest } = d;
    return { ...evaluation, decision: { ...rest, decision: 'deny', reason_code: 'PLAN_CHANGED' } };
  }
  if (d.decision !== 'require_approval' || !compiled) return evaluation;
  const key = ctx.signer?.keys[0];
  const approved = { ...d, decision: 'allow' as const, reason_code: 'APPROVED' };
  if (!key) return { ...evaluation, decision: approved };
  const issued = issueCapability({
    key,
    tenant: ctx.tenant_id ?? 'default',
    task: ctx.task?.id ?? null,
    agent: ctx.agent_id ?? null,
    plan: intent,
    plan_digest: d.plan_digest,
    policy_revision: compiled.revision,
    budget: ctx.budgets ?? {},
    now: ctx.now ?? new Date(),
    ttl_seconds: ctx.signer?.ttl_seconds ?? compiled.options.capability_ttl_seconds,
  });
  const capability = { id: issued.id, expires_at: issued.expires_at, token: issued.token };
  return { ...evaluation, decision: { ...approved, capability } };
}
