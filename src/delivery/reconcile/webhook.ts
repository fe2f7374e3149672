import { isRecord, parseJson } from '../../channels/http.js';
import { STATUS_URL_PLACEHOLDER } from '../../channels/webhook/format.js';
import { signWebhook, webhookTimestamp } from '../../egress/index.js';
import type { Lookup } from './lookup.js';

/**
 * A webhook receiver's status URL (`channels.<name>.status_url`, docs/channels.md "Status URL"): one
 * GET of the template with `{event_id}` replaced by the delivery's event id — the `webhook-id` it was
 * sent with — signed like the send (Standard Webhooks over an empty body, the same `webhook-id`), so
 * the receiver knows it is Switchboard asking. The answer:
 *
 * - 2xx with `{ "event_id": "<that id>", "status": "received" }` → delivered (`id`, when given, is
 *   kept as the provider id);
 * - 404 → the receiver never got it: sent again with the same event id (it de-duplicates on it);
 * - 408, 425, 429, 5xx, no answer → asked again later;
 * - anything else (401/403, another event id, another status, not JSON) → a person decides.
 */
export const WEBHOOK_RECEIVED = 'received';

const LATER = new Set([408, 425, 429]);

export const webhookLookup: Lookup = async (row, config, deps) => {
  const template = typeof config['status_url'] === 'string' ? config['status_url'] : undefined;
  if (!template) return { kind: 'unsettled', why: 'webhook: no status_url to ask' };
  const secretEnv = typeof config['secret_env'] === 'string' ? config['secret_env'] : '';
  const secret = deps.secret(secretEnv);
  if (!secret) return { kind: 'unsettled', why: `webhook: environment variable ${secretEnv} is not set` };
  const url = template.replaceAll(STATUS_URL_PLACEHOLDER, encodeURIComponent(row.event_id));
  let headers: Record<string, string>;
  try {
    headers = {
      accept: 'application/json',
      ...signWebhook({
        id: row.event_id,
        timestamp: webhookTimestamp(deps.now()),
        body: '',
        secrets: [secret],
      }),
    };
  } catch (err) {
    return { kind: 'unsettled', why: `webhook: ${secretEnv}: ${(err as Error).message}` };
  }
  const res = await deps.get(url, headers);
  if (res.status === undefined)
    return { kind: 'retry', error: `webhook status: ${res.error ?? 'no answer'}` };
  if (res.status === 404) return { kind: 'absent' };
  if (res.status >= 500 || LATER.has(res.status))
    return { kind: 'retry', error: `webhook status: HTTP ${res.status}` };
  if (res.status < 200 || res.status >= 300)
    return { kind: 'unsettled', why: `webhook status: HTTP ${res.status}` };
  const body = parseJson(res.body);
  if (!isRecord(body) || body['event_id'] !== row.event_id)
    return { kind: 'unsettled', why: 'webhook status: the answer does not name this event_id' };
  if (body['status'] !== WEBHOOK_RECEIVED)
    return {
      kind: 'unsettled',
      why: `webhook status: status is ${JSON.stringify(body['status'] ?? null).slice(0, 40)}, not "${WEBHOOK_RECEIVED}"`,
    };
  return typeof body['id'] === 'string' && body['id'] !== ''
    ? { kind: 'found', providerId: body['id'].slice(0, 200) }
    : { kind: 'found' };
};
