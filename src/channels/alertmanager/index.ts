import type { HttpResponse, SendResult } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import { classifyStatus } from '../http.js';
import {
  ALERT_DESCRIPTION_MAX_BYTES,
  type AlertmanagerConfig,
  alertmanagerConfig,
  formatAlertmanager,
} from './format.js';

/** `POST /api/v2/alerts` answers 200 with an empty body; 400 is a rejected alert, 5xx a busy or broken server. */
export function parseAlertmanagerResult(res: HttpResponse): SendResult {
  return classifyStatus(res) ?? { kind: 'ok' };
}

export const alertmanager = defineHttpChannel<AlertmanagerConfig>({
  type: 'alertmanager',
  configSchema: alertmanagerConfig,
  buttons: false,
  maxLength: ALERT_DESCRIPTION_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatAlertmanager,
  parseResult: parseAlertmanagerResult,
});

export { alertmanagerConfig, formatAlertmanager, type AlertmanagerConfig };
