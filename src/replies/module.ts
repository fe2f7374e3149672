import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { tasksPort } from '../tasks/port.js';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { repliesPort } from './port.js';
import { replyKeyOf } from './key.js';
import { replyRoutes } from './routes.js';
import { Replies } from './service.js';

/** Subscriber names key the inbox: renaming one makes it see old events again. */
const TARGET_SUBSCRIBER = 'replies.targets';
/** Channel types whose replies map back to a task (the callbacks module reads their updates). */
export const REPLY_CHANNEL_TYPES: readonly string[] = ['telegram', 'slack'];
const SWEEP_MS = 3_600_000;

/** The sweep is a singleton: it runs on the cluster's leader (docs/scale.md). */
const requires = { tasks: optional(tasksPort), cluster: optional(clusterPort) };
/** What replies use: the core and, when it runs, the tasks module (a reply resumes a task). */
export type RepliesDeps = Deps<typeof requires>;

/**
 * Replies from a phone resume a headless session: the signed reply page `/r/{token}`, and the record of
 * which chat message carried which reply target (for Telegram replies, read by the callbacks module).
 */

export function repliesModule() {
  let replies: Replies | undefined;
  let svc: RepliesDeps | undefined;
  const ensure = (services: RepliesDeps): Replies => {
    replies ??= new Replies(services);
    return replies;
  };
  return defineModule({
    name: 'replies',
    requires,
    provides: [repliesPort],
    migrations: new URL('./migrations/', import.meta.url),
    routes(app, services) {
      svc = services;
      replyRoutes(
        app,
        services,
        () => ensure(services),
        () => replyKeyOf(services),
      );
    },
    start(services) {
      svc = services;
      services.provide(repliesPort, ensure(services));
    },
    subscribers(services) {
      const r = ensure(services);
      return [
        {
          name: TARGET_SUBSCRIBER,
          accepts: (t) => t === 'integration.delivery.succeeded',
          // Every successful delivery passes here; the target insert is idempotent (ON CONFLICT DO NOTHING).
          ownsInbox: true,
          handle: (event) => r.onDelivered(event, REPLY_CHANNEL_TYPES),
        },
      ];
    },
    workers(services) {
      const r = ensure(services);
      return [
        leaderOnly(() => services.cluster, {
          name: 'replies.sweep',
          intervalMs: SWEEP_MS,
          tick: () => r.sweep(),
          onError: (err) => svc?.logger.error({ err }, 'replies: sweep failed'),
        }),
      ];
    },
  });
}
