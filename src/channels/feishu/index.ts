import type { ChannelKind } from '../channel.js';
import { defineHttpChannel } from '../define.js';
import {
  clearFeishuTokens,
  feishuVerdict,
  parseFeishuResult,
  sendFeishuApp,
  TOKEN_INVALID_CODES,
  updateFeishuAppCard,
} from './app.js';
import {
  FEISHU_OPEN_API,
  FEISHU_TEXT_MAX_BYTES,
  type FeishuAppConfig,
  type FeishuConfig,
  feishuAppCard,
  feishuCardTime,
  type FeishuCardOutcome,
  feishuConfig,
  feishuDecidedCard,
  feishuSign,
  feishuUuid,
  formatFeishu,
} from './format.js';

/** The custom-bot webhook: one signed POST, link buttons. */
const webhookMode = defineHttpChannel<FeishuConfig>({
  type: 'feishu',
  configSchema: feishuConfig,
  buttons: true,
  maxLength: FEISHU_TEXT_MAX_BYTES,
  lengthUnit: 'bytes',
  format: formatFeishu,
  parseResult: parseFeishuResult,
  verdict: feishuVerdict,
});

/**
 * Two modes of one kind: the custom-bot webhook or, with `app:`, an app bot (token, then
 * `im/v1/messages`, callback buttons that `src/callbacks` verifies). Only sending differs.
 */
export const feishu: ChannelKind<FeishuConfig> = {
  ...webhookMode,
  send: (msg, config, deps) =>
    config.app ? sendFeishuApp(msg, config, config.app, deps) : webhookMode.send(msg, config, deps),
};

export {
  clearFeishuTokens,
  FEISHU_OPEN_API,
  type FeishuAppConfig,
  type FeishuConfig,
  feishuAppCard,
  feishuCardTime,
  type FeishuCardOutcome,
  feishuConfig,
  feishuDecidedCard,
  feishuSign,
  feishuUuid,
  feishuVerdict,
  formatFeishu,
  parseFeishuResult,
  TOKEN_INVALID_CODES,
  updateFeishuAppCard,
};
