import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel, resultFromVerdict } from '../define.js';
import { classifyStatus, isRecord, parseJson, providerText } from '../http.js';
import { DISCORD_DESCRIPTION_MAX_CHARS, type DiscordConfig, discordConfig, formatDiscord } from './format.js';

/**
 * With `?wait=true` Discord answers 200 with the message (`id`). A 429 carries `retry_after` in
 * seconds (a float) in the body, which is more precise than the rounded `Retry-After` header; a
 * refusal carries Discord's `{code, message}`. Undefined for an answer without either (a 5xx page):
 * its status decides.
 */
export function discordVerdict(res: HttpResponse): SendResult | undefined {
  const body = parseJson(res.body);
  const after = isRecord(body) ? body['retry_after'] : undefined;
  if (res.status === 429 && typeof after === 'number' && Number.isFinite(after) && after >= 0) {
    return {
      kind: 'retry',
      error: `discord: ${String(isRecord(body) ? (body['message'] ?? 'rate limited') : 'rate limited')}`,
      retryAfterMs: Math.ceil(after * 1000),
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
    return undefined;
  }
  if (isRecord(body) && typeof body['id'] === 'string') return { kind: 'ok', providerId: body['id'] };
  return { kind: 'dead', reason: `not a Discord message: ${providerText(res.body)}` };
}

export const parseDiscordResult = resultFromVerdict(discordVerdict, 'not a Discord message');

export const discord = defineHttpChannel<DiscordConfig>({
  type: 'discord',
  configSchema: discordConfig,
  buttons: false,
  maxLength: DISCORD_DESCRIPTION_MAX_CHARS,
  lengthUnit: 'chars',
  format: formatDiscord,
  parseResult: parseDiscordResult,
  verdict: discordVerdict,
});

export { discordConfig, formatDiscord, type DiscordConfig };
