import type { ApprovalView } from '../../approvals/port.js';
import type { GateDecision } from '../../gate/port.js';
import type { Decision, RuntimeAdapter } from '../runtime.js';

/** Pure rules of the hook route: how long to hold an approval, and what its outcome means. */

/**
 * Kept back from the runtime's own hook timeout, so the runtime hears the answer rather than timing
 * out: 10 s, or a fifth of a short timeout (OpenClaw's 12 s). The default hold is the rest: Claude
 * Code and Codex 590 s, Gemini CLI and Hermes 50 s, OpenClaw 9.6 s (docs/runtimes.md, "How long a hook
 * is held").
 */
export const HOLD_MARGIN_MS = 10_000;
export const HOLD_MARGIN_SHARE = 0.2;

/** Time kept back from the bridge's deadline for the reply to travel and be written. */
export const BRIDGE_DEADLINE_MARGIN_MS = 2_000;

/** The longest a hook of this runtime can be held; 0 where the runtime documents no timeout (Cursor). */
export function runtimeHoldMs(adapter: RuntimeAdapter): number {
  const timeout = adapter.defaultTimeoutMs;
  if (timeout === null) return 0;
  return timeout - Math.min(HOLD_MARGIN_MS, HOLD_MARGIN_SHARE * timeout);
}

/**
 * How long to hold a `require_approval`: as long as the runtime allows, or `waitSeconds` when that is
 * set and shorter, and never past the bridge's deadline. A runtime whose timeout is undocumented
 * (Cursor) is not held: guessing too long would let it decide on its own, so it gets the native ask or
 * the deny at once.
 */
export function holdMs(
  adapter: RuntimeAdapter,
  waitSeconds: number | undefined,
  bridgeDeadlineMs?: number,
): number {
  let ms = runtimeHoldMs(adapter);
  if (waitSeconds !== undefined) ms = Math.min(ms, waitSeconds * 1000);
  if (bridgeDeadlineMs !== undefined) ms = Math.min(ms, bridgeDeadlineMs - BRIDGE_DEADLINE_MARGIN_MS);
  return Math.max(0, Math.floor(ms));
}

/** The gate's contract, as the adapters read it (they ignore what they cannot carry). */
export function forAdapter(g: GateDecision): Decision {
  const d: Decision = { decision: g.decision, reason_code: g.reason_code };
  if (g.reason !== undefined) d.reason = g.reason;
  if (g.input !== undefined) d.input = g.input;
  if (g.approval_id !== undefined) d.approval_id = g.approval_id;
  if (g.retry_after !== undefined) d.retry_after = g.retry_after;
  if (g.policy_revision !== null) d.policy_revision = g.policy_revision;
  d.plan_digest = g.plan_digest;
  if (g.capability !== undefined) d.capability = g.capability;
  d.constraints = g.constraints;
  d.matched_rules = g.matched_rules;
  return d;
}

/**
 * The gate had no opinion: no rule matched and the configured default is allow. The runtime keeps its
 * own permission flow (its dialog, its allow-list) rather than being told "allow", which in Claude
 * Code would skip the dialog for every tool a fresh install has no rule for.
 */
export function noOpinion(g: Pick<GateDecision, 'decision' | 'reason_code'>): boolean {
  return g.decision === 'allow' && g.reason_code === 'NO_RULE_MATCHED';
}

/**
 * A permission prompt's approval on the phone: approved or rejected is the answer; still pending or
 * expired (nobody tapped in time) is no decision, so the runtime's own dialog appears at the desk.
 */
export function afterPhone(view: ApprovalView | undefined): Decision | null {
  if (!view || (view.state !== 'approved' && view.state !== 'rejected')) return null;
  return afterWait({ decision: 'require_approval', reason_code: 'PHONE_APPROVAL' }, view);
}

/** A held approval's state turned into the decision to answer with; still pending keeps the ask. */
export function afterWait(held: Decision, view: ApprovalView | undefined): Decision {
  if (!view) return held;
  const base = { approval_id: view.id, ...(held.plan_digest ? { plan_digest: held.plan_digest } : {}) };
  switch (view.state) {
    case 'approved': {
      const by = view.decided_by ? ` by ${view.decided_by}` : '';
      if (view.recheck?.outcome === 'no_capability') {
        // A person said yes, but the policy in force now says no (a rule changed, or the agent is frozen):
        // the approval does not override the gate.
        return {
          ...base,
          decision: 'deny',
          reason_code: 'APPROVAL_RECHECK_DENIED',
          reason: `approval ${view.id} was granted${by}, but the current policy no longer allows it (${view.recheck.reason_code})`,
        };
      }
      const d: Decision = {
        ...base,
        decision: 'allow',
        reason_code: 'APPROVED',
        reason: `approval ${view.id} granted${by}${view.comment ? `: ${view.comment}` : ''}`,
      };
      if (view.capability) d.capability = view.capability;
      return d;
    }
    case 'rejected':
      return {
        ...base,
        decision: 'deny',
        reason_code: 'APPROVAL_REJECTED',
        reason: view.comment
          ? `approval ${view.id} rejected: ${view.comment}`
          : `approval ${view.id} rejected${view.decided_by ? ` by ${view.decided_by}` : ''}`,
      };
    case 'expired':
      return {
        ...base,
        decision: 'deny',
        reason_code: 'APPROVAL_EXPIRED',
        reason: `approval ${view.id} expired before anyone decided`,
      };
    default:
      return held;
  }
}
