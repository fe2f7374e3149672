import type { Message } from '../../notify/port.js';
import type { EnvelopeInput } from '../../envelope/index.js';
import { attemptRecord } from '../events.js';
import type { SendResult } from '../../egress/index.js';
import { type Outcome, type RetryPolicy, withJitter } from '../retry.js';
import type * as q from './sql.js';
import { prefix } from '../../text/index.js';

/** What one finished attempt does to its row and the log: pure, so the engine only writes it. */

/** Channel types whose receivers de-duplicate (signed webhooks carry `webhook-id` = the event id; A2A pushes `X-Switchboard-Event-Id` and the JWT `jti`). */
export const DEDUP_CHANNEL_TYPES: readonly string[] = ['webhook', 'a2a-push'];

/** Errors and reasons stored on a row are short; they never hold a URL (channels keep it out). */
const ERROR_MAX_CHARS = 300;

export interface Finished {
  row: q.DeliveryRow;
  attempt: number;
  result: SendResult;
  outcome: Outcome;
  providerId?: string;
  /** The destination can be asked about a send (a webhook's `status_url`): an unknown one is asked first. */
  askFirst?: boolean;
  /** Refused because the channel is revoked (revoked.ts): the event says so, and breakers do not count it. */
  channelRevoked?: boolean;
}

/** Whether a channel's parsed config names a way to ask its receiver about a send (`status_url`). */
export function asksFirst(config: unknown): boolean {
  return (
    typeof config === 'object' &&
    config !== null &&
    typeof (config as Record<string, unknown>)['status_url'] === 'string'
  );
}

/** The row's next status and the attempt's event. */
export function settle(f: Finished): { status: q.DeliveryStatus; event: EnvelopeInput } {
  const rec = attemptRecord(f.result, f.outcome, f.attempt);
  const data: Record<string, unknown> = {
    delivery_id: f.row.id,
    destination: f.row.destination,
    channel: f.row.channel_type,
    summary: rec.summary,
    ...rec.data,
  };
  let status: q.DeliveryStatus;
  switch (f.outcome.kind) {
    case 'ok':
      status = 'succeeded';
      // The provider's message id (Telegram message_id, Slack ts): a chat reply to it can be mapped back.
      if (f.providerId !== undefined) data['provider_id'] = f.providerId;
      break;
    case 'retry':
      status = 'pending';
      break;
    case 'dead':
      status = 'dead';
      if (f.channelRevoked) data['channel_revoked'] = true;
      break;
    case 'unknown':
      if (f.askFirst || !DEDUP_CHANNEL_TYPES.includes(f.row.channel_type)) {
        // The provider may have posted it: the reconciler asks (a webhook's status URL, a chat's
        // history) and a person decides what it cannot settle, rather than a blind second post.
        status = 'reconcile';
        delete data['next_at'];
        data['reconcile'] = true;
      } else status = f.outcome.at === undefined ? 'dead' : 'unknown';
      break;
  }
  return {
    status,
    event: {
      type: rec.type,
      causation_id: f.row.event_id,
      correlation_id: f.row.correlation_id,
      subject: { resource_ref: f.row.id },
      redacted_summary: data,
    },
  };
}

/** A row that never went out: dead with a reason, no attempt counted as sent. */
export function refusal(row: q.DeliveryRow, reason: string): Finished {
  return {
    row,
    attempt: Number(row.attempts),
    result: { sent: false, durationMs: 0 },
    outcome: { kind: 'dead', reason },
  };
}

export function parseMessage(text: string): Message | undefined {
  try {
    const m = JSON.parse(text) as unknown;
    return typeof m === 'object' && m !== null ? (m as Message) : undefined;
  } catch {
    return undefined;
  }
}

export function nextAt(o: Outcome, row: q.DeliveryRow, now: number): number {
  if (o.kind === 'retry') return o.at;
  if (o.kind === 'unknown' && o.at !== undefined) return o.at;
  return Math.max(now, Number(row.next_attempt_at));
}

export function errorOf(o: Outcome): string | null {
  const text = o.kind === 'retry' || o.kind === 'unknown' ? o.error : o.kind === 'dead' ? o.reason : null;
  return text === null ? null : prefix(text, ERROR_MAX_CHARS);
}

/** A schedule whose last step is 0 must not turn the priority lane into a hot loop. */
export const KEEP_TRYING_MIN_MS = 1_000;

/**
 * The priority lane (blocked, awaiting approval, failed) is retried until delivered: where the
 * schedule is used up, the next attempt comes after the schedule's last step again. Permanent
 * failures stay dead, and an unknown chat send still goes to a person.
 */
export function keepTrying(
  o: Outcome,
  channelType: string,
  policy: RetryPolicy,
  now: number,
  random: () => number,
): Outcome {
  const last = Math.max(policy.scheduleMs.at(-1) ?? 0, KEEP_TRYING_MIN_MS);
  const step = withJitter(last, policy.jitter, random);
  if (o.kind === 'dead' && o.reason.startsWith('exhausted after'))
    return {
      kind: 'retry',
      at: now + step,
      error: o.reason,
      ...(o.status !== undefined ? { status: o.status } : {}),
    };
  if (o.kind === 'unknown' && o.at === undefined && DEDUP_CHANNEL_TYPES.includes(channelType))
    return { kind: 'unknown', error: o.error, at: now + step };
  return o;
}
