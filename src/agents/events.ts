import { type Envelope, type EnvelopeInput, causedBy, jsonDigest } from '../envelope/index.js';
import type { GateDecision, GateIntent } from '../gate/port.js';
import type { Principal } from '../kernel/module.js';
import type { CollaborationRequest, Receipt } from './port.js';
import { type Candidate, ranked } from './route.js';

/**
 * What a collaboration says to the gate and the log, as pure builders: the intent (`kind =
 * agent.delegate`, resource `agent:<id>/<skill>`), `agent.collaboration.requested` (digests, never
 * the input), one `agent.collaboration.routed` per decision with every candidate's score, and the
 * receipt's `agent.collaboration.completed` or `.failed`. A collaboration asked for a task carries the
 * task's id and correlation, so it shows on that task's timeline.
 */

export interface Asked {
  refId: string;
  req: CollaborationRequest;
  caller: Principal;
  waiter: string;
  task: { id: string; correlation_id: string } | null;
}

export function intentOf(a: Asked, agent: string): GateIntent {
  return {
    tool: 'ask_agent',
    input: { skill: a.req.skill, agent },
    action: 'agent.delegate',
    resource: `agent:${agent}/${a.req.skill}`,
    kind: 'agent.delegate',
    event_type: 'agent.collaboration.requested',
    ...(a.task ? { task_id: a.task.id } : {}),
  };
}

export function requestedEvent(a: Asked): EnvelopeInput {
  return {
    type: 'agent.collaboration.requested',
    ...(a.task ? { correlation_id: a.task.correlation_id } : {}),
    actor: { agent_id: a.caller.name },
    execution: { task_id: a.task?.id ?? null },
    subject: { tool: 'ask_agent', action: 'agent.delegate', resource_ref: `skill:${a.req.skill}` },
    redacted_summary: {
      ref_id: a.refId,
      skill: a.req.skill,
      caller: a.caller.name,
      waiter: a.waiter,
      strategy: a.req.strategy,
      timeout_ms: a.req.timeout_ms,
      fallback: a.req.fallback,
      input_digest: jsonDigest(a.req.input),
    },
  };
}

export function routedEvent(
  cause: Envelope,
  a: Asked,
  attempt: number,
  outcome: { chosen: string | null; refused?: string; decision?: GateDecision },
  candidates: readonly Candidate[],
  /** How many agents had the skill: the router lists the best `LISTED` of them and counts the rest. */
  considered: number = candidates.length,
): EnvelopeInput {
  return causedBy(cause, {
    type: 'agent.collaboration.routed',
    actor: { agent_id: a.caller.name },
    subject: {
      tool: 'ask_agent',
      action: 'agent.delegate',
      resource_ref: outcome.chosen ? `agent:${outcome.chosen}/${a.req.skill}` : `skill:${a.req.skill}`,
    },
    redacted_summary: {
      ref_id: a.refId,
      skill: a.req.skill,
      strategy: a.req.strategy,
      attempt,
      chosen: outcome.chosen,
      ...(outcome.refused ? { refused: outcome.refused } : {}),
      ...(outcome.decision
        ? { decision: outcome.decision.decision, reason_code: outcome.decision.reason_code }
        : {}),
      candidates: ranked(candidates),
      ...(considered > candidates.length ? { candidates_omitted: considered - candidates.length } : {}),
    },
  });
}

export function endedEvent(cause: Envelope, a: { caller: { name: string } }, r: Receipt): EnvelopeInput {
  return causedBy(cause, {
    type: r.state === 'completed' ? 'agent.collaboration.completed' : 'agent.collaboration.failed',
    actor: { agent_id: a.caller.name },
    subject: {
      tool: 'ask_agent',
      action: 'agent.delegate',
      resource_ref: r.agent ? `agent:${r.agent}/${r.skill}` : `skill:${r.skill}`,
    },
    redacted_summary: {
      ref_id: r.ref_id,
      skill: r.skill,
      agent: r.agent,
      state: r.state,
      attempts: r.attempts.map((t) => ({ agent: t.agent, state: t.state, latency_ms: t.latency_ms })),
      ...(r.error ? { error_code: r.error.code } : {}),
      ...(r.result ? { result_digest: jsonDigest(r.result) } : {}),
    },
  });
}
