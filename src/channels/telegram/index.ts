import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel, resultFromVerdict } from '../define.js';
import { classifyStatus, isRecord, parseJson, providerText } from '../http.js';
import { formatTelegram, TELEGRAM_TEXT_MAX_CHARS, type TelegramConfig, telegramConfig } from './format.js';

/**
 * The Bot API answers `{ok:true, result}` or `{ok:false, error_code, description, parameters}` at
 * any status; a flood limit is 429 with `parameters.retry_after` in seconds (not `Retry-After`).
 * Undefined for an answer that is not the Bot API's (a proxy page): its status decides.
 */
export function telegramVerdict(res: HttpResponse): SendResult | undefined {
  const body = parseJson(res.body);
  if (isRecord(body) && body['ok'] === true) {
    const result = body['result'];
    const id = isRecord(result) ? result['message_id'] : undefined;
    return typeof id === 'number' ? { kind: 'ok', providerId: String(id) } : { kind: 'ok' };
  }
  if (!isRecord(body) || body['ok'] !== false) return undefined;
  const params = isRecord(body['parameters']) ? body['parameters'] : {};
  const text = `telegram ${String(body['error_code'] ?? res.status)}: ${providerText(String(body['description'] ?? ''))}`;
  const after = params['retry_after'];
  if (typeof after === 'number' && Number.isFinite(after) && after >= 0)
    return { kind: 'retry', error: text, retryAfterMs: Math.ceil(after * 1000) };
  if (typeof params['migrate_to_chat_id'] === 'number') {
    return {
      kind: 'dead',
      reason: `${text} (the group is now chat ${params['migrate_to_chat_id']}; update chat_id)`,
    };
  }
  // The description is the diagnosis; whether it passes with time is the status's to say.
  const status = classifyStatus(res);
  if (status?.kind === 'retry') return { kind: 'retry', error: text };
  return { kind: 'dead', reason: text };
}

export const parseTelegramResult = resultFromVerdict(telegramVerdict, 'not a Bot API answer');

export const telegram = defineHttpChannel<TelegramConfig>({
  type: 'telegram',
  configSchema: telegramConfig,
  buttons: true,
  maxLength: TELEGRAM_TEXT_MAX_CHARS,
  lengthUnit: 'chars',
  format: formatTelegram,
  parseResult: parseTelegramResult,
  verdict: telegramVerdict,
});

export { callbackData, formatTelegram, telegramConfig, type TelegramConfig } from './format.js';
