import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import { errcodeResult } from '../http.js';
import { formatWecom, WECOM_MARKDOWN_MAX_BYTES, type WecomConfig, wecomConfig } from './format.js';

// 45009: API frequency limit (20 a minute per robot); -1: system busy. Both pass with time.
const RETRYABLE_CODES = new Set([45009, -1]);

/** WeCom answers 200 with `{errcode, errmsg}`; only `errcode == 0` is delivery (93000: bad key, 40058: bad field). */
export function parseWecomResult(res: HttpResponse): SendResult {
  return errcodeResult(res, { name: 'WeCom', tag: 'wecom', retryable: RETRYABLE_CODES });
}

export const wecom = defineHttpChannel<WecomConfig>({
  type: 'wecom',
  configSchema: wecomConfig,
  // Template-card buttons call back into a WeCom app only; a group robot carries the page link.
  buttons: false,
  maxLength: WECOM_MARKDOWN_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatWecom,
  parseResult: parseWecomResult,
});

export { formatWecom, wecomConfig, type WecomConfig };
