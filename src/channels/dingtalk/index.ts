import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import { errcodeResult } from '../http.js';
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
  return errcodeResult(res, { name: 'DingTalk', tag: 'dingtalk', retryable: RETRYABLE_CODES });
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
