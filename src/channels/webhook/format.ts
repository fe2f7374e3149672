import { z } from 'zod';
import { signWebhook, webhookTimestamp } from '../../egress/index.js';
import { ChannelConfigError, type FormatContext, type HttpRequest } from '../channel.js';
import type { Message } from '../../notify/port.js';
import { envName, httpUrl, JSON_HEADERS, requireSecret } from '../http.js';
import { plainText, sanitize } from '../text.js';
import { truncate } from '../../text/index.js';

/** Where `status_url` puts the delivery's event id (the `webhook-id` of the send). */
export const STATUS_URL_PLACEHOLDER = '{event_id}';

const statusUrl = z
  .string()
  .max(2000)
  .refine((u) => u.includes(STATUS_URL_PLACEHOLDER), {
    message: `must contain ${STATUS_URL_PLACEHOLDER}, where the event id of the delivery goes`,
  })
  .refine((u) => httpUrl.safeParse(u.replaceAll(STATUS_URL_PLACEHOLDER, 'evt_x')).success, {
    message: 'must be an absolute http:// or https:// URL without credentials',
  });

export const webhookConfig = z.strictObject({
  type: z.literal('webhook'),
  url: httpUrl,
  /** `whsec_<base64>` (Standard Webhooks); the receiver verifies `webhook-signature` with it. */
  secret_env: envName,
  /**
   * The receiver's status URL, `{event_id}` replaced by the delivery's event id: a send whose answer
   * never came is asked about there (signed like the send) before it is sent again
   * (docs/channels.md, "Status URL"; src/delivery/reconcile/webhook.ts).
   */
  status_url: statusUrl.optional(),
});
export type WebhookConfig = z.infer<typeof webhookConfig>;

/**
 * Standard Webhooks asks payloads to stay under 20 KB: the rendered text and the raw detail get
 * 8 KB each, which leaves room for the rest of the message.
 */
export const WEBHOOK_TEXT_MAX_BYTES = 8000;

const EVENT_TYPE: Record<Message['kind'], string> = {
  progress: 'agent.progress.reported',
  approval: 'agent.approval.requested',
  alert: 'agent.notification.raised',
};

export function formatWebhook(input: Message, config: WebhookConfig, ctx: FormatContext): HttpRequest {
  const msg = sanitize(input);
  const data: Record<string, unknown> = {
    event_id: msg.eventId,
    kind: msg.kind,
    stage: msg.stage,
    severity: msg.severity,
    title: msg.title,
    summary: msg.summary,
    // Pre-rendered for receivers that only display; the fields beside it are for those that act.
    text: plainText(msg, WEBHOOK_TEXT_MAX_BYTES, 'bytes'),
    locale: msg.locale ?? 'en',
    mention: msg.mention === true,
  };
  if (msg.detail !== undefined) data['detail'] = truncate(msg.detail, WEBHOOK_TEXT_MAX_BYTES, 'bytes');
  if (msg.artifact !== undefined) data['artifact'] = msg.artifact;
  if (msg.task) data['task'] = msg.task;
  if (msg.agent !== undefined) data['agent'] = msg.agent;
  // Only the page and the id: a machine receiver should not hold one-time approve links.
  if (msg.actions) data['approval'] = { id: msg.actions.approvalId, page_url: msg.actions.pageUrl };
  // The reply page (a GET shows a form; only its POST resumes the task), for receivers that relay to people.
  if (msg.reply) data['reply'] = { url: msg.reply.url };
  const body = JSON.stringify({
    type: EVENT_TYPE[msg.kind],
    timestamp: new Date(ctx.now).toISOString(),
    data,
  });
  let signed: Record<string, string>;
  try {
    // The event id is the webhook id, so a retry keeps it and the receiver de-duplicates on it.
    const headers = signWebhook({
      id: msg.eventId,
      timestamp: webhookTimestamp(ctx.now),
      body,
      secrets: [requireSecret(ctx, config.secret_env)],
    });
    signed = { ...headers };
  } catch (err) {
    if (err instanceof TypeError) throw new ChannelConfigError(`${config.secret_env}: ${err.message}`);
    throw err;
  }
  return { url: config.url, headers: { ...JSON_HEADERS, ...signed }, body };
}
