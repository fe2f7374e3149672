import type { CompiledPolicy } from './compile.js';
import type { Evaluation } from './evaluate.js';

/** What `switchboard policy test` prints: the decision, then why, one fact a line. Pure formatting. */
export function explainEvaluation(evaluation: Evaluation, compiled: CompiledPolicy | undefined): string[] {
  const { decision: d, trace } = evaluation;
  const byId = new Map(compiled?.rules.map((r) => [r.rule.id, r.rule]));
  const lines = [
    `decision: ${d.decision} (${d.reason_code})`,
    `policy revision: ${d.policy_revision}`,
    `event type: ${trace.type}, risk: ${trace.risk}`,
    `plan digest: ${d.plan_digest}`,
  ];
  if (trace.original_plan_digest && trace.original_plan_digest !== d.plan_digest) {
    lines.push(`asked plan digest: ${trace.original_plan_digest}`);
  }
  lines.push(`rules considered: ${trace.considered.length}, matched: ${d.matched_rules.length}`);
  for (const m of d.matched_rules) {
    const rule = byId.get(m.id);
    const why = rule ? ` priority ${rule.priority}, when ${rule.when}` : '';
    lines.push(`  matched ${m.id}: ${m.decision} ${rule?.reason_code ?? ''}${why}`.trimEnd());
  }
  for (const e of trace.errors) lines.push(`  error in ${e.rule_id}: ${e.message}`);
  if (trace.policy_unavailable) lines.push('failed open: tagged policy_unavailable, no capability issued');
  if (trace.modify) lines.push(`modified by ${trace.modify.rule_id}: ${JSON.stringify(d.input)}`);
  if (Object.keys(d.constraints).length > 0) lines.push(`constraints: ${JSON.stringify(d.constraints)}`);
  if (d.capability) lines.push(`capability: ${d.capability.id} until ${d.capability.expires_at}`);
  return lines;
}
