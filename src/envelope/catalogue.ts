/**
 * The event type catalogue. Types are `agent.<noun>.<verb>` or `integration.<noun>.<verb>`; an intent
 * (`requested`) and its fact (`completed`, `authorized`, `denied`) are separate types, never one
 * `agent.updated`. A module that needs a new type adds it here, so every type in the log is known.
 */
export const EVENT_TYPES = [
  // runtimes (hooks)
  'agent.tool.requested',
  'agent.tool.authorized',
  'agent.tool.denied',
  'agent.tool.deferred',
  'agent.tool.modified',
  'agent.tool.completed',
  'agent.tool.failed',
  'agent.permission.requested',
  'agent.session.started',
  'agent.session.ended',
  'agent.session.compacted',
  'agent.turn.completed',
  'agent.turn.failed',
  'agent.prompt.submitted',
  'agent.subagent.started',
  'agent.subagent.stopped',
  'agent.notification.raised',
  'agent.runtime.unrecognized',
  'agent.runtime.observed',
  'agent.permission.resolved',
  // mouth
  'agent.progress.reported',
  'agent.approval.requested',
  'agent.approval.approved',
  'agent.approval.rejected',
  'agent.approval.expired',
  'agent.notification.sent',
  'agent.notification.suppressed',
  'agent.notification.blocked',
  'agent.reply.received',
  // gate (`agent.capability.issued` is no longer written: the capability is folded into
  // `agent.tool.authorized`; the type stays so logs written before the fold still verify and read)
  'agent.capability.issued',
  'agent.capability.revoked',
  'agent.policy.loaded',
  'agent.policy.rejected',
  'agent.agent.frozen',
  'agent.agent.unfrozen',
  // gate breakers (src/gate/breaker): an agent or the tenant crossed a `breakers:` threshold and was frozen
  'agent.breaker.tripped',
  'agent.away.changed',
  // console: an admin opened a raw payload in the vault view (docs/console.md)
  'agent.payload.viewed',
  // tasks
  'agent.task.submitted',
  'agent.task.started',
  'agent.task.input_required',
  'agent.task.completed',
  'agent.task.failed',
  'agent.task.canceled',
  'agent.task.rejected',
  'agent.task.stalled',
  'agent.task.resumed',
  // a2a (src/a2a): a SendMessage to a skill, the cause its task is launched from
  'agent.message.received',
  // a2a: an end the A2A layer records itself, with no task event behind it (a launch or resume that
  // could not start; a cancel of a task whose agent had already exited)
  'agent.a2a_task.failed',
  'agent.a2a_task.canceled',
  // delivery
  'integration.delivery.attempted',
  'integration.delivery.succeeded',
  'integration.delivery.failed',
  'integration.delivery.dead',
  'integration.delivery.unknown',
  'integration.delivery.blocked',
  'integration.delivery.replayed',
  // the reconciler asked the provider about an unknown outcome: found, absent (re-sent) or unsettled
  'integration.delivery.reconciled',
  'integration.endpoint.disabled',
  'integration.endpoint.enabled',
  // reach (src/reach): a touch reaching the gate, and its outcome (or its refusal before the gate)
  'agent.touch.requested',
  'agent.touch.completed',
  // agents (src/agents): a collaboration asked, each routing decision (candidates and scores), its receipt
  'agent.collaboration.requested',
  'agent.collaboration.routed',
  'agent.collaboration.completed',
  'agent.collaboration.failed',
  'agent.agent.registered',
  // effects (src/effects): a side effect frozen before it goes out (its plan digest, capability and
  // idempotency key), and the receipt that came back or the reconciler found (docs/effects.md)
  'agent.effect.prepared',
  'agent.effect.receipted',
  // ears
  'integration.webhook.accepted',
  'integration.webhook.rejected',
  'integration.webhook.admitted',
  'integration.webhook.dropped',
  'integration.webhook.coalesced',
  // a credential refused by the provider, and its later recovery: a source's (ingress, 401 on a re-read)
  // or a channel's (delivery, a send; `channel` instead of `source`)
  'integration.credential.revoked',
  'integration.credential.restored',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);
export const EVENT_TYPE_PATTERN = /^(agent|integration)\.[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && KNOWN.has(value);
}
