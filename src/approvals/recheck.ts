import type { Principal } from '../kernel/module.js';
import type { ApprovalPlan, PlanRecheck } from './port.js';
import type { Recheck } from './view.js';

type Granted = Awaited<ReturnType<PlanRecheck>>;

/**
 * On approval, the frozen plan is decided again under the policy serving now (the gate supplies the
 * check: `useRecheck`). Only an `allow` for the very same plan digest that carries a capability grants
 * one; anything else (a deny, a changed plan, a gate error) leaves the approval approved but without a
 * capability, and the reason is recorded. Fails closed: an error in the gate is `RECHECK_FAILED`, never
 * a capability.
 */
export async function recheckPlan(
  check: PlanRecheck | undefined,
  plan: ApprovalPlan,
  frozenDigest: string,
  asker: Principal,
  extra: { task_id: string | null; session_id: string | null },
): Promise<{ recheck: Recheck; capability?: NonNullable<Granted['capability']>; error?: unknown }> {
  if (!check) return { recheck: { outcome: 'skipped', reason_code: 'GATE_NOT_RUNNING' } };
  const intent: Parameters<PlanRecheck>[0] = { tool: plan.tool, input: plan.input };
  if (plan.action !== undefined) intent.action = plan.action;
  if (plan.resource !== undefined) intent.resource = plan.resource;
  if (extra.task_id) intent.task_id = extra.task_id;
  if (extra.session_id) intent.session_id = extra.session_id;
  let d: Granted;
  try {
    d = await check(intent, asker, frozenDigest);
  } catch (error) {
    return {
      recheck: {
        outcome: 'no_capability',
        decision: null,
        reason_code: 'RECHECK_FAILED',
        policy_revision: null,
      },
      error,
    };
  }
  const base = { decision: d.decision, policy_revision: d.policy_revision };
  if (d.plan_digest !== frozenDigest) {
    return { recheck: { outcome: 'no_capability', ...base, reason_code: 'PLAN_CHANGED' } };
  }
  if (d.decision === 'allow' && d.capability) {
    return {
      recheck: { outcome: 'capability', ...base, reason_code: d.reason_code },
      capability: d.capability,
    };
  }
  return { recheck: { outcome: 'no_capability', ...base, reason_code: d.reason_code } };
}
