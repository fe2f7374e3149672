import type { Envelope, EnvelopeInput } from '../../envelope/index.js';
import { causedBy as causedByEvent } from '../../envelope/index.js';
import type { GateDecision, GateIntent } from '../../gate/port.js';
import { truncate } from '../../text/index.js';
import type { Trace } from '../evaluate.js';

/** What the log says about one evaluation; the raw input is in the vault, never in a summary. */
export interface DecisionFacts {
  decision: GateDecision;
  trace: Trace;
  tool: string;
  /** The canonical kind the subject records. */
  kind?: string;
  action: string | null;
  resource: string | null;
  /** Set when the evaluation was the re-check of an approved plan. */
  approved_plan_digest?: string;
  /** The task's steps when it was decided: a shadow run gives `task.steps` what the gate saw. */
  task_steps?: number;
}

/** deny → denied; defer and require_approval → deferred (the call waits); allow and modify → authorized. */
export function decisionEventType(d: GateDecision['decision']): EnvelopeInput['type'] {
  if (d === 'deny') return 'agent.tool.denied';
  if (d === 'defer' || d === 'require_approval') return 'agent.tool.deferred';
  return 'agent.tool.authorized';
}

/**
 * The events that follow `agent.tool.requested`, all caused by it: the decision (which, for allow,
 * modify and an approved plan, names the capability issued: `capability_id`, `capability_expires_at`),
 * then (modify) the rewrite. Pure: the caller appends them in one transaction. `modifiedRef` is the
 * vault entry holding the original and the replacement input.
 */
export function decisionEvents(
  cause: Envelope | { task_id: string | null; session_id: string | null },
  f: DecisionFacts,
  modifiedRef?: { ref: string; digest: string },
): EnvelopeInput[] {
  // The re-check of an approved plan has no event in hand; its events are roots that name the task.
  const causedBy = (e: EnvelopeInput): EnvelopeInput =>
    'event_id' in cause ? causedByEvent(cause, e) : { ...e, execution: { ...cause } };
  const d = f.decision;
  const subject = {
    tool: f.tool,
    action: f.action,
    resource_ref: f.resource,
    ...(f.kind ? { kind: f.kind } : {}),
  };
  const policy = { revision: d.policy_revision, risk: f.trace.risk };
  const out: EnvelopeInput[] = [
    causedBy({
      type: decisionEventType(d.decision),
      subject,
      policy,
      redacted_summary: {
        decision: d.decision,
        reason_code: d.reason_code,
        policy_revision: d.policy_revision,
        plan_digest: d.plan_digest,
        matched_rules: d.matched_rules,
        constraints: d.constraints,
        ...(d.approval_id ? { approval_id: d.approval_id } : {}),
        ...(d.retry_after ? { retry_after: d.retry_after } : {}),
        ...(f.trace.held ? { held: true } : {}),
        // The capability travels on the decision (folded, docs/envelope.md): its id and expiry, never the token.
        ...(d.capability
          ? { capability_id: d.capability.id, capability_expires_at: d.capability.expires_at }
          : {}),
        ...(d.tags ? { tags: d.tags } : {}),
        ...(f.trace.errors.length > 0 ? { rule_errors: f.trace.errors.map((e) => e.rule_id) } : {}),
        ...(f.approved_plan_digest ? { approved_plan_digest: f.approved_plan_digest } : {}),
        ...(f.task_steps !== undefined ? { task_steps: f.task_steps } : {}),
      },
    }),
  ];
  const m = f.trace.modify;
  if (m) {
    out.push(
      causedBy({
        type: 'agent.tool.modified',
        subject,
        policy,
        ...(modifiedRef ? { payload_ref: modifiedRef.ref, payload_digest: modifiedRef.digest } : {}),
        redacted_summary: {
          rule_id: m.rule_id,
          original_plan_digest: f.trace.original_plan_digest,
          plan_digest: d.plan_digest,
          changed_keys: changedKeys(m.original, m.replacement),
        },
      }),
    );
  }
  return out;
}

function changedKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

/** The approver reads `action`; a command longer than this is cut (the full plan is in the approval). */
const ACTION_PREVIEW_CHARS = 200;

/** What the approver reads first: the tool, and the command or path when the input has one. */
export function actionText(intent: GateIntent): string {
  const input = intent.input;
  const detail = [input['command'], input['file_path'], input['url']].find((v) => typeof v === 'string');
  const head = intent.action ? `${intent.tool} ${intent.action}` : intent.tool;
  const target = intent.resource ? ` on ${intent.resource}` : '';
  const text = typeof detail === 'string' ? `${head}${target}: ${detail}` : `${head}${target}`;
  return truncate(text, ACTION_PREVIEW_CHARS);
}
