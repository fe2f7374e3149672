import type { Module, Services } from '../kernel/module.js';
import { startWorker, type Worker } from '../kernel/worker.js';
import { replyKeyOf } from './key.js';
import { replyRoutes } from './routes.js';
import { Replies } from './service.js';

/** Subscriber names key the inbox: renaming one makes it see old events again. */
const TARGET_SUBSCRIBER = 'replies.targets';
/** Channel types whose replies map back to a task (the callbacks module reads their updates). */
export const REPLY_CHANNEL_TYPES: readonly string[] = ['telegram', 'slack'];
const SWEEP_MS = 3_600_000;

/**
 * Replies from a phone resume a headless session: the signed reply page `/r/{token}`, and the record of
 * which chat message carried which reply target (for Telegram replies, read by the callbacks module).
 */
export function repliesModule(): Module {
  let replies: Replies | undefined;
  let sweeper: Worker | undefined;
  let svc: Services | undefined;
  const ensure = (services: Services): Replies => {
    replies ??= new Replies(services);
    return replies;
  };
  return {
    name: 'replies',
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
      const r = ensure(services);
      services.relay.subscribe({
        name: TARGET_SUBSCRIBER,
        accepts: (t) => t === 'integration.delivery.succeeded',
        // Every successful delivery passes here; the target insert is idempotent (ON CONFLICT DO NOTHING).
        ownsInbox: true,
        handle: (event) => r.onDelivered(event, REPLY_CHANNEL_TYPES),
      });
      sweeper = startWorker({
        name: 'replies.sweep',
        intervalMs: SWEEP_MS,
        tick: () => r.sweep(),
        onError: (err) => svc?.logger.error({ err }, 'replies: sweep failed'),
      });
    },
    async stop() {
      await sweeper?.stop();
      sweeper = undefined;
    },
  };
}
