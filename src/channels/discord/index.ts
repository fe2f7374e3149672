import type { ChannelKind, HttpResponse, SendResult } from '../channel.js';
import { classifyStatus, isRecord, parseJson, providerText, sendHttp } from '../http.js';
import { DISCORD_DESCRIPTION_MAX_CHARS, type DiscordConfig, discordConfig, formatDiscord } from './format.js';

/**
 * With `?wait=true` Discord answers 200 with the message (`id`). A 429 carries `retry_after` in
 * seconds (a float) in the body, which is more precise than the rounded `Retry-After` header.
 */
export function parseDiscordResult(res: HttpResponse): SendResult {
  const body = parseJson(res.body);
  if (res.status === 429 && isRecord(body) && typeof body['retry_after'] === 'number') {
    return {
      kind: 'retry',
      error: `discord: ${String(body['message'] ?? 'rate limited')}`,
      retryAfterMs: Math.ceil(body['retry_after'] * 1000),
    };
  }
  const status = classifyStatus(res);
  if (status) {
    if (status.kind === 'dead' && isRecord(body) && 'code' in body) {
      return {
        kind: 'dead',
        reason: `discord code ${String(body['code'])}: ${providerText(String(body['message'] ?? ''))}`,
      };
    }
    return status;
  }
  if (isRecord(body) && typeof body['id'] === 'string') return { kind: 'ok', providerId: body['id'] };
  return { kind: 'dead', reason: `not a Discord message: ${providerText(res.body)}` };
}

export const discord: ChannelKind<DiscordConfig> = {
  type: 'discord',
  configSchema: discordConfig,
  buttons: false,
  maxLength: DISCORD_DESCRIPTION_MAX_CHARS,
  lengthUnit: 'chars',
  format: formatDiscord,
  parseResult: parseDiscordResult,
  send: (msg, config, deps) =>
    sendHttp({ format: formatDiscord, parseResult: parseDiscordResult }, msg, config, deps),
};

export { discordConfig, formatDiscord, type DiscordConfig };
