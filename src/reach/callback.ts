import type { DeliveryPort } from '../delivery/port.js';
import type { Message } from '../notify/port.js';
import { prefix } from '../text/index.js';
import type { TouchError, TouchResponse } from './protocol.js';

/**
 * The async channel's push callback (seed §3.2): a touch that names `callback` — a `channels:` entry
 * of type `webhook` — has its finished response delivered there by the delivery engine, enqueued in
 * the commit that finishes the touch. So the push is durable (it survives a restart), retried on the
 * engine's schedule with its dead-letter queue, signed as every webhook delivery is (Standard
 * Webhooks, `webhook-id` = the `agent.touch.completed` event id, which a receiver de-duplicates on),
 * and sent through the egress guard. The receiver gets the channel's JSON body; `data.detail` holds
 * the TouchResponse as JSON (already PII-redacted and shaped for the model), `data.artifact` the
 * GET /v1/touch/{request_id} link.
 */

/**
 * The webhook channel renders `detail` up to 8000 bytes (Standard Webhooks asks for bodies under
 * 20 KB); a larger response goes without its data, and the receiver fetches it from the link.
 */
const DETAIL_MAX_BYTES = 8000;

/** Why a request's `callback` cannot be used; undefined when it can. */
export function callbackProblem(
  name: string,
  channel: string,
  delivery: DeliveryPort | undefined,
): string | undefined {
  if (channel !== 'async') return 'is only for channel "async" (sync and stream answer on the request)';
  if (!delivery) return 'needs the delivery module, which is not running';
  const entry = delivery.channel(name);
  if (!entry) return `names no channel; configure channels.${name} (type: webhook)`;
  if (entry.type !== 'webhook') return `names a ${entry.type} channel; a callback must be a webhook channel`;
  return undefined;
}

export function callbackMessage(
  r: TouchResponse,
  tool: string,
  caller: string,
  taskId: string | null,
  eventId: string,
  publicUrl: string | undefined,
): Message {
  const outcome = r.ok ? 'done' : (r.error as TouchError).code;
  const summary = r.ok
    ? prefix((r.text ?? '').replace(/\s+/g, ' '), 100)
    : prefix((r.error as TouchError).message, 100);
  return {
    kind: 'progress',
    stage: r.ok ? 'done' : 'failed',
    severity: r.ok ? 'info' : 'warn',
    title: `touch ${tool}: ${outcome}`,
    summary: prefix(`${tool} ${outcome}: ${summary}`, 120),
    detail: detailOf(r),
    ...(publicUrl ? { artifact: `${publicUrl.replace(/\/+$/, '')}/v1/touch/${r.request_id}` } : {}),
    ...(taskId ? { task: { id: taskId } } : {}),
    agent: caller,
    eventId,
  };
}

function detailOf(r: TouchResponse): string {
  const status = r.ok ? 'done' : 'failed';
  const whole = JSON.stringify({ ...r, status });
  if (Buffer.byteLength(whole) <= DETAIL_MAX_BYTES) return whole;
  const { data: _data, text: _text, ...rest } = r;
  return JSON.stringify({ ...rest, status, data_omitted: 'too large to push; GET the artifact link' });
}
