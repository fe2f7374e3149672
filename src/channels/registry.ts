/** Every channel kind by its config `type`. */
import type { ChannelKind } from './channel.js';
import { alertmanager } from './alertmanager/index.js';
import { dingtalk } from './dingtalk/index.js';
import { discord } from './discord/index.js';
import { email } from './email/index.js';
import { feishu } from './feishu/index.js';
import { ntfy } from './ntfy/index.js';
import { slack } from './slack/index.js';
import { telegram } from './telegram/index.js';
import { webhook } from './webhook/index.js';
import { wecom } from './wecom/index.js';

/** A kind whose config type is not known statically: parse with `configSchema`, then `send`. */
export type AnyChannelKind = ChannelKind<unknown, unknown, unknown>;

/** Every channel kind by its `type` (the `type:` key of a `channels.<name>` config entry). */
export const CHANNEL_KINDS = {
  ntfy,
  feishu,
  dingtalk,
  wecom,
  slack,
  discord,
  telegram,
  webhook,
  email,
  alertmanager,
} as const satisfies Record<string, AnyChannelKind>;

export type ChannelType = keyof typeof CHANNEL_KINDS;

export function channelKind(type: string): AnyChannelKind | undefined {
  return Object.hasOwn(CHANNEL_KINDS, type) ? CHANNEL_KINDS[type as ChannelType] : undefined;
}
