import type { Module, Services } from '../kernel/module.js';
import { type CallbacksConfig, callbacksConfig } from './config.js';
import {
  type CallbackState,
  callbackRoutes,
  type FeishuEndpoint,
  type SlackEndpoint,
  type TelegramEndpoint,
} from './routes.js';

export interface CallbacksOptions {
  /** The `callbacks:` section, until the lead wires it into the config schema (then read from config). */
  config?: unknown;
  /** Where `*_env` secrets are read; default `process.env`. */
  secrets?: (envName: string) => string | undefined;
}

/** Thrown at start for a callback entry that names a missing channel, a wrong kind, or an unset secret. */
export class CallbacksConfigError extends Error {
  override name = 'CallbacksConfigError';
}

function resolve(
  section: CallbacksConfig,
  channels: Services['config']['channels'],
  secret: (env: string) => string | undefined,
): CallbackState {
  const need = (kind: 'slack' | 'telegram' | 'feishu', name: string, env: string): string => {
    const channel = channels[name];
    if (channel?.type !== kind) {
      throw new CallbacksConfigError(
        `callbacks.${kind}.${name}: no channel of type ${kind} is named ${name}`,
      );
    }
    const value = secret(env);
    if (value === undefined || value === '') {
      throw new CallbacksConfigError(`callbacks.${kind}.${name}: environment variable ${env} is not set`);
    }
    return value;
  };
  const slack = new Map<string, SlackEndpoint>();
  for (const [name, config] of Object.entries(section.slack)) {
    slack.set(name, { config, secret: need('slack', name, config.signing_secret_env) });
  }
  const telegram = new Map<string, TelegramEndpoint>();
  for (const [name, config] of Object.entries(section.telegram)) {
    telegram.set(name, { config, token: need('telegram', name, config.secret_token_env) });
  }
  const feishu = new Map<string, FeishuEndpoint>();
  for (const [name, config] of Object.entries(section.feishu)) {
    const token = need('feishu', name, config.verification_token_env);
    const encryptKey =
      config.encrypt_key_env === undefined ? undefined : need('feishu', name, config.encrypt_key_env);
    feishu.set(name, { config, token, ...(encryptKey === undefined ? {} : { encryptKey }) });
  }
  return { slack, telegram, feishu };
}

/**
 * Approvals from a phone: Slack Block Kit buttons, Telegram inline keyboards and Feishu app-card
 * buttons come back here as verified callbacks and decide through `services.approvals`.
 */
export function callbacksModule(opts: CallbacksOptions = {}): Module {
  let state: CallbackState = { slack: new Map(), telegram: new Map(), feishu: new Map() };
  return {
    name: 'callbacks',
    routes(app, services) {
      callbackRoutes(app, services, () => state);
    },
    start(services: Services) {
      const fromConfig = (services.config as unknown as { callbacks?: unknown }).callbacks;
      const section = callbacksConfig.parse(opts.config ?? fromConfig);
      state = resolve(section, services.config.channels, opts.secrets ?? ((env) => process.env[env]));
    },
  };
}
