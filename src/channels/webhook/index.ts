import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import { classifyStatus } from '../http.js';
import { formatWebhook, WEBHOOK_TEXT_MAX_BYTES, type WebhookConfig, webhookConfig } from './format.js';

/**
 * Standard Webhooks: success is 2xx only; 3xx is failure; 410 Gone means the endpoint is gone
 * (dead, and the relay should disable it); 429/502/504 throttle with Retry-After.
 */
export function parseWebhookResult(res: HttpResponse): SendResult {
  const status = classifyStatus(res);
  if (status)
    return status.kind === 'dead' && res.status === 410
      ? { kind: 'dead', reason: 'HTTP 410: endpoint gone' }
      : status;
  return { kind: 'ok' };
}

export const webhook = defineHttpChannel<WebhookConfig>({
  type: 'webhook',
  configSchema: webhookConfig,
  buttons: false,
  maxLength: WEBHOOK_TEXT_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatWebhook,
  parseResult: parseWebhookResult,
});

export { formatWebhook, webhookConfig, type WebhookConfig };
