import type { Envelope } from '../envelope/index.js';
import type { StoredEvent } from '../log/log.js';
import type { EffectsDeps } from './service.js';
import { view } from './service.js';
import type { Trace, TraceStage, TraceStep } from './port.js';
import * as q from './sql.js';

/**
 * One chain, intent → decision → approval → effect → receipt, read back from the log: every event of
 * the correlations and tasks the id touches, kept when it is one of those stages (progress reports and
 * the like are left out), in log order. Reads only.
 */

const STAGES: Record<string, TraceStage> = {
  'integration.webhook.accepted': 'intent',
  'integration.webhook.admitted': 'intent',
  'agent.message.received': 'intent',
  'agent.tool.requested': 'intent',
  'agent.touch.requested': 'intent',
  'agent.permission.requested': 'intent',
  'agent.notification.sent': 'intent',
  'agent.tool.authorized': 'decision',
  'agent.tool.denied': 'decision',
  'agent.tool.deferred': 'decision',
  'agent.tool.modified': 'decision',
  'agent.approval.requested': 'approval',
  'agent.approval.approved': 'approval',
  'agent.approval.rejected': 'approval',
  'agent.approval.expired': 'approval',
  'agent.capability.issued': 'capability',
  'agent.capability.revoked': 'capability',
  'agent.effect.prepared': 'effect',
  'agent.effect.receipted': 'receipt',
  'agent.tool.completed': 'receipt',
  'agent.tool.failed': 'receipt',
  'agent.touch.completed': 'receipt',
  'integration.delivery.succeeded': 'receipt',
  'integration.delivery.dead': 'receipt',
  'integration.delivery.unknown': 'receipt',
  'integration.delivery.blocked': 'receipt',
  'integration.delivery.reconciled': 'receipt',
  'agent.task.submitted': 'task',
  'agent.task.started': 'task',
  'agent.task.completed': 'task',
  'agent.task.failed': 'task',
  'agent.task.canceled': 'task',
  'agent.task.rejected': 'task',
};

/** Summary fields that tie a step to its neighbours; ids and outcomes only, never payloads. */
const FACTS = [
  'effect_id',
  'idempotency_key',
  'kind',
  'target',
  'status',
  'provider_id',
  'answer_digest',
  'plan_digest',
  'capability_id',
  'approval_id',
  'decision',
  'reason_code',
  'delivery_id',
  'destination',
  'outcome',
  'request_id',
  'decided_by',
  'by',
  'reconciled',
];

/** At most this many events per correlation or task: a trace is read by a person. */
const PER_SOURCE = 1000;
const EFFECTS_MAX = 200;

function step(e: StoredEvent): TraceStep | undefined {
  const env: Envelope = e.envelope;
  const stage = STAGES[env.type];
  if (!stage) return undefined;
  const facts: Record<string, unknown> = {};
  const summary = env.redacted_summary as Record<string, unknown>;
  for (const k of FACTS) if (summary[k] !== undefined && summary[k] !== null) facts[k] = summary[k];
  if (env.subject.tool) facts['tool'] = env.subject.tool;
  return {
    seq: e.seq,
    event_id: env.event_id,
    type: env.type,
    stage,
    occurred_at: env.occurred_at,
    policy_revision: env.policy.revision,
    facts,
  };
}

export async function traceOf(d: Pick<EffectsDeps, 'db' | 'log'>, id: string): Promise<Trace | undefined> {
  const correlations = new Set<string>();
  const tasks = new Set<string>();
  let found = false;
  if (id.startsWith('evt_')) {
    const ev = await d.log.get(id);
    if (ev) {
      found = true;
      correlations.add(ev.envelope.correlation_id);
      if (ev.envelope.execution.task_id) tasks.add(ev.envelope.execution.task_id);
    }
  }
  if (id.startsWith('tsk_')) tasks.add(id);
  if (id.startsWith('cor_')) correlations.add(id);
  const rows = await d.db.query<q.EffectRow>(q.selectRelated(id, EFFECTS_MAX));
  for (const r of rows) {
    if (r.correlation_id) correlations.add(r.correlation_id);
    if (r.task_id) tasks.add(r.task_id);
  }
  const events = new Map<number, StoredEvent>();
  for (const c of correlations)
    for (const e of await d.log.list({ correlationId: c, limit: PER_SOURCE })) events.set(e.seq, e);
  for (const t of tasks)
    for (const e of await d.log.list({ taskId: t, limit: PER_SOURCE })) events.set(e.seq, e);
  if (!found && rows.length === 0 && events.size === 0) return undefined;
  // Effects of the same correlations that the id did not name directly (a task's deliveries).
  const effects = new Map(rows.map((r) => [r.id, r]));
  for (const c of correlations)
    for (const r of await d.db.query<q.EffectRow>(q.selectRelated(c, EFFECTS_MAX))) effects.set(r.id, r);
  const steps = [...events.values()]
    .sort((a, b) => a.seq - b.seq)
    .map(step)
    .filter((s): s is TraceStep => s !== undefined);
  return {
    id,
    effects: [...effects.values()].sort((a, b) => Number(a.created_at) - Number(b.created_at)).map(view),
    steps,
  };
}
