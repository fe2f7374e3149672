import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import { classifyStatus, isRecord, parseJson, providerText } from '../http.js';
import { formatNtfy, NTFY_MAX_BYTES, ntfyConfig, type NtfyConfig } from './format.js';

/** ntfy answers a publish with the stored message (`event: "message"`, `id`); anything else was not delivered. */
export function parseNtfyResult(res: HttpResponse): SendResult {
  const status = classifyStatus(res);
  if (status) return status;
  const body = parseJson(res.body);
  if (isRecord(body) && body['event'] === 'message' && typeof body['id'] === 'string') {
    return { kind: 'ok', providerId: body['id'] };
  }
  return { kind: 'dead', reason: `not an ntfy publish answer: ${providerText(res.body)}` };
}

export const ntfy = defineHttpChannel<NtfyConfig>({
  type: 'ntfy',
  configSchema: ntfyConfig,
  buttons: true,
  maxLength: NTFY_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatNtfy,
  parseResult: parseNtfyResult,
});

export { formatNtfy, ntfyConfig, type NtfyConfig };
