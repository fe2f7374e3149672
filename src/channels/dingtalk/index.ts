import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import { classifyStatus, isRecord, parseJson, providerText } from '../http.js';
import {
  DINGTALK_TEXT_MAX_CHARS,
  type DingtalkConfig,
  dingtalkConfig,
  dingtalkSign,
  formatDingtalk,
} from './format.js';

// 130101: "send too fast" (20 messages a minute per robot) — wait and retry. Other codes (310000
// keyword/signature/IP, 300001 token) need the config fixed.
const RETRYABLE_CODES = new Set([130101, -1]);

/** DingTalk answers 200 with `{errcode, errmsg}`; only `errcode == 0` is delivery. */
export function parseDingtalkResult(res: HttpResponse): SendResult {
  const status = classifyStatus(res);
  if (status) return status;
  const body = parseJson(res.body);
  const code = isRecord(body) ? body['errcode'] : undefined;
  if (code === 0) return { kind: 'ok' };
  if (typeof code !== 'number')
    return { kind: 'dead', reason: `not a DingTalk answer: ${providerText(res.body)}` };
  const text = `dingtalk errcode ${code}: ${isRecord(body) ? String(body['errmsg'] ?? '') : ''}`;
  return RETRYABLE_CODES.has(code) ? { kind: 'retry', error: text } : { kind: 'dead', reason: text };
}

export const dingtalk = defineHttpChannel<DingtalkConfig>({
  type: 'dingtalk',
  configSchema: dingtalkConfig,
  buttons: true,
  maxLength: DINGTALK_TEXT_MAX_CHARS,
  lengthUnit: 'chars',
  format: formatDingtalk,
  parseResult: parseDingtalkResult,
});

export { dingtalkConfig, dingtalkSign, formatDingtalk, type DingtalkConfig };
