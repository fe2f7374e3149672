import type { ChannelKind, HttpResponse, SendResult } from '../channel.js';
import { classifyStatus, isRecord, parseJson, providerText, sendHttp } from '../http.js';
import {
  FEISHU_TEXT_MAX_BYTES,
  type FeishuConfig,
  feishuConfig,
  feishuSign,
  formatFeishu,
} from './format.js';

// Business codes that mean "slow down", not "this will never work": 9499 and 11232 are the
// custom-bot frequency limits. Everything else non-zero (19021 bad signature, 19024 missing
// keyword, 19001 bad token…) needs a person to fix the config.
const RETRYABLE_CODES = new Set([9499, 11232]);

/** Feishu answers 200 with `{code, msg}`; only `code == 0` (or legacy `StatusCode == 0`) is delivery. */
export function parseFeishuResult(res: HttpResponse): SendResult {
  const body = parseJson(res.body);
  const code = isRecord(body) ? (body['code'] ?? body['StatusCode']) : undefined;
  const text = isRecord(body) ? String(body['msg'] ?? body['StatusMessage'] ?? '') : providerText(res.body);
  if (typeof code === 'number' && code !== 0) {
    if (RETRYABLE_CODES.has(code) || res.status === 429 || res.status >= 500) {
      return { kind: 'retry', error: `feishu code ${code}: ${text}` };
    }
    return { kind: 'dead', reason: `feishu code ${code}: ${text}` };
  }
  const status = classifyStatus(res);
  if (status) return status;
  if (code === 0) return { kind: 'ok' };
  return { kind: 'dead', reason: `not a Feishu bot answer: ${providerText(res.body)}` };
}

export const feishu: ChannelKind<FeishuConfig> = {
  type: 'feishu',
  configSchema: feishuConfig,
  buttons: true,
  maxLength: FEISHU_TEXT_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatFeishu,
  parseResult: parseFeishuResult,
  send: (msg, config, deps) =>
    sendHttp({ format: formatFeishu, parseResult: parseFeishuResult }, msg, config, deps),
};

export { feishuConfig, feishuSign, formatFeishu, type FeishuConfig };
