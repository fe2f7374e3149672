import { approvalsPort } from '../approvals/port.js';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { deliveryPort } from '../delivery/port.js';
import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { repliesPort } from '../replies/port.js';
import {
  endsApproval,
  feishuCardSender,
  onApprovalEnded,
  onFeishuDelivered,
  sweepFeishuCards,
} from './cards.js';
import { type CallbacksConfig, callbacksConfig } from './config.js';
import {
  type CallbackState,
  callbackRoutes,
  type FeishuEndpoint,
  type SlackEndpoint,
  type TelegramEndpoint,
} from './routes.js';

/** The card sweep is a singleton: it runs on the cluster's leader (docs/scale.md). */
const requires = {
  approvals: approvalsPort,
  delivery: deliveryPort,
  replies: optional(repliesPort),
  cluster: optional(clusterPort),
};
const sections = { callbacks: callbacksConfig };
/** Approvals decide, delivery knows the channels, replies resume tasks (when running). */
export type CallbacksDeps = Deps<typeof requires, typeof sections>;

export interface CallbacksOptions {
  /** Replaces the `callbacks:` section (tests). */
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
  channel: (name: string) => { type: string } | undefined,
  secret: (env: string) => string | undefined,
): CallbackState {
  const need = (kind: 'slack' | 'telegram' | 'feishu', name: string, env: string): string => {
    const found = channel(name);
    if (found?.type !== kind) {
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

/** Subscriber names key the inbox: renaming one makes it see old events again. */
const CARDS_SUBSCRIBER = 'callbacks.feishu_cards';
const CARD_UPDATES_SUBSCRIBER = 'callbacks.feishu_card_updates';
const SWEEP_MS = 3_600_000;

/**
 * Approvals from a phone: Slack Block Kit buttons, Telegram inline keyboards and Feishu app-card
 * buttons come back here as verified callbacks and decide through `services.approvals`. Feishu app
 * cards are then updated in place to show the decision (`cards.ts`, table `feishu_cards`, 0470).
 */
export function callbacksModule(opts: CallbacksOptions = {}) {
  let state: CallbackState = { slack: new Map(), telegram: new Map(), feishu: new Map() };
  return defineModule({
    name: 'callbacks',
    config: sections,
    requires,
    migrations: new URL('./migrations/', import.meta.url),
    routes(app, services) {
      callbackRoutes(app, services, () => state);
    },
    start(services) {
      const section =
        opts.config === undefined ? services.config.callbacks : callbacksConfig.parse(opts.config);
      state = resolve(
        section,
        (name) => services.delivery.channel(name),
        opts.secrets ?? ((env) => process.env[env]),
      );
      services.delivery.addSender?.(feishuCardSender(services));
    },
    subscribers(services) {
      return [
        {
          name: CARDS_SUBSCRIBER,
          accepts: (t) => t === 'integration.delivery.succeeded',
          // Both effects are idempotent (ON CONFLICT DO NOTHING; one delivery per event and card).
          ownsInbox: true,
          handle: (event) => onFeishuDelivered(services, event),
        },
        {
          name: CARD_UPDATES_SUBSCRIBER,
          accepts: endsApproval,
          ownsInbox: true,
          handle: (event) => onApprovalEnded(services, event),
        },
      ];
    },
    workers(services) {
      return [
        leaderOnly(() => services.cluster, {
          name: 'callbacks.feishu_cards.sweep',
          intervalMs: SWEEP_MS,
          tick: () => sweepFeishuCards(services),
          onError: (err) => services.logger.error({ err }, 'callbacks: card sweep failed'),
        }),
      ];
    },
  });
}
