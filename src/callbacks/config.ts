import { z } from 'zod';
import { DEFAULT_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS } from '../ingress/sources/common/timestamp.js';

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, _)');
const channelName = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'must name a configured channel');

export const slackCallbackConfig = z.strictObject({
  /** The Slack app's signing secret (Basic Information → Signing Secret), by environment variable. */
  signing_secret_env: envName,
  /** Only these Slack user ids may decide; absent: anyone in the workspace who sees the message. */
  allowed_user_ids: z
    .array(z.string().regex(/^[UW][A-Z0-9]+$/, 'must be a Slack user id (U… or W…)'))
    .min(1)
    .optional(),
  /** Only clicks from this workspace count (a distributed app shares one signing secret across workspaces). */
  team_id: z
    .string()
    .regex(/^T[A-Z0-9]+$/, 'must be a Slack team id (T…)')
    .optional(),
  tolerance_seconds: z.number().int().min(1).max(MAX_TOLERANCE_SECONDS).default(DEFAULT_TOLERANCE_SECONDS),
});
export type SlackCallbackConfig = z.infer<typeof slackCallbackConfig>;

export const telegramCallbackConfig = z.strictObject({
  /** The `secret_token` given to setWebhook, by environment variable. */
  secret_token_env: envName,
  /** Only these Telegram user ids (`from.id`) may decide; absent: anyone who sees the message. */
  allowed_user_ids: z.array(z.number().int().positive()).min(1).optional(),
});
export type TelegramCallbackConfig = z.infer<typeof telegramCallbackConfig>;

export const feishuCallbackConfig = z.strictObject({
  /** The app's "Encrypt Key", by environment variable: when set, every callback must carry a valid X-Lark-Signature. */
  encrypt_key_env: envName.optional(),
  /** The app's "Verification Token", by environment variable: checked in every body, and before the challenge is answered. */
  verification_token_env: envName,
  /** Only these Feishu open_ids (`ou_…`, the operator) may decide; absent: anyone who sees the card. */
  allowed_open_ids: z
    .array(z.string().regex(/^ou_[A-Za-z0-9]+$/, 'must be a Feishu open_id (ou_…)'))
    .min(1)
    .optional(),
  tolerance_seconds: z.number().int().min(1).max(MAX_TOLERANCE_SECONDS).default(DEFAULT_TOLERANCE_SECONDS),
});
export type FeishuCallbackConfig = z.infer<typeof feishuCallbackConfig>;

/** The `callbacks:` section: which channels take button clicks back, and how each is verified. */
export const callbacksConfig = z
  .strictObject({
    slack: z.record(channelName, slackCallbackConfig).default({}),
    telegram: z.record(channelName, telegramCallbackConfig).default({}),
    feishu: z.record(channelName, feishuCallbackConfig).default({}),
  })
  .default({ slack: {}, telegram: {}, feishu: {} });
export type CallbacksConfig = z.infer<typeof callbacksConfig>;
