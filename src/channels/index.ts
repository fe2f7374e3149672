/** The channels module: one folder per kind, the registry, config checks and the guarded SMTP transport. */
export * from './channel.js';
export { type ChannelProblem, type ConfiguredChannel, checkChannels, parseChannels } from './config.js';
export { SEND_TIMEOUT_MS } from './http.js';
export { type AnyChannelKind, CHANNEL_KINDS, type ChannelType, channelKind } from './registry.js';
export { labels } from './text.js';
export { type BlockedTarget, type ChannelTarget, blockedTarget, channelTargets } from './targets.js';
export { alertmanager } from './alertmanager/index.js';
export { dingtalk } from './dingtalk/index.js';
export { discord } from './discord/index.js';
export { createSmtpTransport, email, guardedSmtp, type SmtpOptions } from './email/index.js';
export { feishu, feishuSign } from './feishu/index.js';
export { dingtalkSign } from './dingtalk/index.js';
export { ntfy } from './ntfy/index.js';
export { SLACK_APPROVE_ACTION, SLACK_REJECT_ACTION, slack } from './slack/index.js';
export { callbackData as telegramCallbackData, telegram } from './telegram/index.js';
export { webhook } from './webhook/index.js';
export { wecom } from './wecom/index.js';
