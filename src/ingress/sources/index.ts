import { z } from 'zod';
import type { SecretLookup, Source, SourceDeps, SourceKind } from '../source.js';
import { a2aPush, a2aPushConfig } from './a2a-push/index.js';
import { feishu, feishuConfig } from './feishu/index.js';
import { github, githubConfig } from './github/index.js';
import { gitlab, gitlabConfig } from './gitlab/index.js';
import { hmac, hmacConfig } from './hmac/index.js';
import { slack, slackConfig } from './slack/index.js';
import { standardWebhooks, standardWebhooksConfig } from './standard-webhooks/index.js';
import { telegram, telegramConfig } from './telegram/index.js';

/** `sources.<name>` in the config file: one strict object per kind, chosen by `type`. */
export const sourceConfigSchema = z.discriminatedUnion('type', [
  githubConfig,
  standardWebhooksConfig,
  slackConfig,
  feishuConfig,
  telegramConfig,
  gitlabConfig,
  hmacConfig,
  a2aPushConfig,
]);

export type SourceConfig = z.infer<typeof sourceConfigSchema>;

/** A kind with its config type erased; `create` validates the config itself, so nothing unchecked gets through. */
export interface RegisteredSourceKind {
  readonly type: string;
  readonly configSchema: z.ZodType<unknown>;
  create(config: unknown, secrets: SecretLookup, deps?: SourceDeps): Source;
}

function register<C>(kind: SourceKind<C>): RegisteredSourceKind {
  return {
    type: kind.type,
    configSchema: kind.configSchema,
    create: (config, secrets, deps) => kind.create(kind.configSchema.parse(config), secrets, deps),
  };
}

/** Every source kind by its `type` name. A new kind is one folder plus one line here. */
export const SOURCE_KINDS: Readonly<Record<SourceConfig['type'], RegisteredSourceKind>> = {
  github: register(github),
  'standard-webhooks': register(standardWebhooks),
  slack: register(slack),
  feishu: register(feishu),
  telegram: register(telegram),
  gitlab: register(gitlab),
  hmac: register(hmac),
  'a2a-push': register(a2aPush),
};

/** Builds a configured source (validated by `sourceConfigSchema`); throws `SourceConfigError` on a missing secret. */
export function createSource(config: SourceConfig, secrets: SecretLookup, deps?: SourceDeps): Source {
  return SOURCE_KINDS[config.type].create(config, secrets, deps);
}

export type { InboundRequest, RejectReason, Source, SourceKind, VerifyResult } from '../source.js';
export { REJECT_ERROR_CODE, REJECT_STATUS, SourceConfigError } from '../source.js';
