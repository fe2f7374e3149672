import type { ChannelKind, HttpResponse, SendResult } from '../channel.js';
import { classifyStatus, sendHttp } from '../http.js';
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

export const alertmanager: ChannelKind<AlertmanagerConfig> = {
  type: 'alertmanager',
  configSchema: alertmanagerConfig,
  buttons: false,
  maxLength: ALERT_DESCRIPTION_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatAlertmanager,
  parseResult: parseAlertmanagerResult,
  send: (msg, config, deps) =>
    sendHttp({ format: formatAlertmanager, parseResult: parseAlertmanagerResult }, msg, config, deps),
};

export { alertmanagerConfig, formatAlertmanager, type AlertmanagerConfig };
