import type { Logger } from 'pino';
import type { Envelope } from '../envelope/index.js';
import type { Subscriber } from '../log/relay.js';

/**
 * The server log's account of what happened: one line for each gate decision, approval step and
 * delivery failure or dead letter, read from the event log by a relay subscriber (so no module logs
 * its own). Only ids, types, outcomes and reason codes are copied, by name: never an input, a payload,
 * an action text, a destination URL or an error body, any of which may carry a secret.
 */
const LOGGED = new Set([
  'agent.tool.authorized',
  'agent.tool.denied',
  'agent.tool.deferred',
  'agent.tool.modified',
  'agent.approval.requested',
  'agent.approval.approved',
  'agent.approval.rejected',
  'agent.approval.expired',
  'integration.delivery.failed',
  'integration.delivery.unknown',
  'integration.delivery.blocked',
  'integration.delivery.dead',
]);

/** The summary fields a line may carry: codes and ids, never free text taken from the outside. */
const SUMMARY_FIELDS = [
  'decision',
  'reason_code',
  'approval_id',
  'policy_revision',
  'matched_rules',
  'delivery_id',
  'channel',
  'attempt',
  'status',
  'blocked_reason',
  'decided_by',
  'via',
] as const;

/**
 * Where `reason` is a code of ours (a delivery's outcome, an early expiry); elsewhere it is what an
 * agent wrote (an approval request's reason) and stays out of the log.
 */
const OWN_REASON = new Set([
  'agent.approval.expired',
  'integration.delivery.failed',
  'integration.delivery.unknown',
  'integration.delivery.blocked',
  'integration.delivery.dead',
]);

/** Dead letters and refused deliveries warn; everything else is information. */
const WARNS = new Set(['integration.delivery.blocked', 'integration.delivery.dead']);

export const ACTIVITY_LOG_SUBSCRIBER = 'server.activity-log';

export function activityLogSubscriber(logger: Logger): Subscriber {
  return {
    name: ACTIVITY_LOG_SUBSCRIBER,
    accepts: (type) => LOGGED.has(type),
    // A log line written twice after a crash is harmless: no inbox row per event.
    ownsInbox: true,
    handle: async (event) => {
      const line = activityLine(event);
      if (WARNS.has(event.type)) logger.warn(line.fields, line.msg);
      else logger.info(line.fields, line.msg);
    },
  };
}

export function activityLine(event: Envelope): { fields: Record<string, unknown>; msg: string } {
  const fields: Record<string, unknown> = { event_id: event.event_id, type: event.type };
  if (event.subject.tool) fields.tool = event.subject.tool;
  if (event.actor.agent_id) fields.agent = event.actor.agent_id;
  if (event.actor.user_id) fields.user = event.actor.user_id;
  if (event.execution.task_id) fields.task_id = event.execution.task_id;
  if (event.execution.session_id) fields.session_id = event.execution.session_id;
  const summary = event.redacted_summary;
  for (const key of SUMMARY_FIELDS) if (summary[key] !== undefined) fields[key] = summary[key];
  if (OWN_REASON.has(event.type) && summary.reason !== undefined) fields.reason = summary.reason;
  return { fields, msg: message(event.type, fields) };
}

function message(type: string, f: Record<string, unknown>): string {
  const code = f.reason_code ? ` (${f.reason_code})` : '';
  const [, kind, what] = type.split('.');
  if (kind === 'tool') return `decision: ${f.decision ?? what} ${f.tool ?? 'a tool call'}${code}`;
  if (kind === 'approval')
    return `approval ${f.approval_id ?? ''} ${what}${f.reason ? ` (${f.reason})` : ''}`;
  const on = `delivery ${f.delivery_id ?? ''} to ${f.channel ?? 'a channel'}`;
  if (what === 'dead') return `dead letter: ${on}${f.reason ? `: ${f.reason}` : ''}`;
  return `${on} ${what}${f.status ? ` (status ${f.status})` : ''}`;
}
