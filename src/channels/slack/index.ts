import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel, resultFromVerdict } from '../define.js';
import { isRecord, parseJson, providerText, retryAfterMs } from '../http.js';
import { formatSlack, SLACK_SECTION_MAX_CHARS, type SlackConfig, slackConfig } from './format.js';

// Web API errors that pass with time; every other `error` (invalid_auth, channel_not_found,
// not_in_channel, invalid_blocks…) needs a person.
const RETRYABLE_ERRORS = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/**
 * chat.postMessage answers `{ok, error}` (200 for most failures, 429 with `Retry-After` for
 * `ratelimited`). Incoming webhooks answer `ok` as text, and errors as text with a 4xx, which say
 * nothing the status does not: undefined, the status decides.
 */
export function slackVerdict(res: HttpResponse): SendResult | undefined {
  const body = parseJson(res.body);
  if (isRecord(body) && typeof body['ok'] === 'boolean') {
    if (body['ok'] === true)
      return typeof body['ts'] === 'string' ? { kind: 'ok', providerId: body['ts'] } : { kind: 'ok' };
    const error = String(body['error'] ?? 'unknown');
    if (res.status === 429 || RETRYABLE_ERRORS.has(error)) {
      const after = retryAfterMs(res.headers);
      return after === undefined
        ? { kind: 'retry', error: `slack: ${error}` }
        : { kind: 'retry', error: `slack: ${error}`, retryAfterMs: after };
    }
    if (res.status >= 500) return { kind: 'retry', error: `slack: ${error}` };
    return { kind: 'dead', reason: `slack: ${error}` };
  }
  if (res.status < 200 || res.status >= 300) return undefined;
  if (res.body.trim() === 'ok') return { kind: 'ok' };
  return { kind: 'dead', reason: `not a Slack answer: ${providerText(res.body)}` };
}

/** Either way only an explicit ok is delivery. */
export const parseSlackResult = resultFromVerdict(slackVerdict, 'not a Slack answer');

export const slack = defineHttpChannel<SlackConfig>({
  type: 'slack',
  configSchema: slackConfig,
  buttons: true,
  maxLength: SLACK_SECTION_MAX_CHARS,
  lengthUnit: 'chars',
  format: formatSlack,
  parseResult: parseSlackResult,
  verdict: slackVerdict,
});

export { formatSlack, slackConfig, type SlackConfig };
export { SLACK_APPROVE_ACTION, SLACK_REJECT_ACTION } from './format.js';
