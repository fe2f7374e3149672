import { defineModule, type Deps } from '../kernel/module.js';
import { startWorker } from '../kernel/worker.js';
import type { Logger } from 'pino';
import { type EventLog, Relay } from '../log/index.js';
import type { Db } from '../store/port.js';
import { natsConfigSchema } from './config.js';
import { NatsPublisher } from './publisher.js';

/** The outbox topic the NATS relay claims: every appended event is queued on it once, by its append. */
export const NATS_TOPIC = 'nats';
/**
 * Retries of a NATS that is down come at most this far apart, so publishing resumes within seconds of
 * its return; each try fails at once while the client knows the connection is down.
 */
export const NATS_RETRY_MAX_MS = 5000;
/**
 * Publishes awaiting their PubAck at once, at most one per correlation: the pipelined relay hands a
 * correlation's rows out one after another, so these never reorder a correlation; the bench gives the
 * bare client as many lanes.
 */
export const NATS_IN_FLIGHT = 32;
/**
 * Heads claimed per pass; the pipelined relay keeps up to four such batches out (claimed, read and
 * queued on their correlations' chains), so a claim overlaps the publishing instead of waiting for it.
 */
export const NATS_BATCH = 500;
/** Where `source` points when `server.public_url` is unset (CloudEvents wants a URI-reference). */
const DEFAULT_GATEWAY_URI = 'urn:switchboard';

const sections = { nats: natsConfigSchema };

/** The relay of the `nats` topic, publishing through `publisher` (the module's, and the bench's). */
export function natsRelay(
  db: Db,
  log: EventLog,
  publisher: NatsPublisher,
  opts: { logger?: Logger; now?: () => number } = {},
): Relay {
  const relay = new Relay(db, log, {
    topic: NATS_TOPIC,
    run: (loop) => startWorker(loop, opts.logger),
    maxAttempts: Number.POSITIVE_INFINITY,
    maxBackoffMs: NATS_RETRY_MAX_MS,
    concurrency: NATS_IN_FLIGHT,
    batchSize: NATS_BATCH,
    pipeline: true,
    everyEvent: true,
    ...opts,
  });
  relay.subscribe({
    name: 'nats.publish',
    accepts: () => true,
    // The stream drops a repeat by its `Nats-Msg-Id`: the publish is its own de-duplication.
    ownsInbox: true,
    // `body` (the stored JSON) goes into the CloudEvent as it is: no second serialization per event.
    handle: (event, body) => publisher.publish(event, body),
  });
  return relay;
}

type NatsDeps = Deps<Record<never, never>, typeof sections>;

/**
 * `nats:` — every committed event as a structured-mode CloudEvent on `<subject_prefix>.<type>`, with
 * `Nats-Msg-Id` = event id. One hop through the outbox: the append that commits an event also writes
 * its row on the `nats` topic (`outboxTopics`, the same transaction, so no start-up event is missed and
 * a crash loses none), and this module's own relay publishes that topic in order per correlation and
 * retries it without limit. NATS down holds up only the `nats` topic: the bus's subscribers go on,
 * nothing is parked as dead, and /readyz says `degraded`.
 */
export function natsModule(opts: { env?: NodeJS.ProcessEnv } = {}) {
  let publisher: NatsPublisher | undefined;
  let relay: Relay | undefined;
  return {
    ...defineModule({ name: 'nats', config: sections }),
    /** The publisher and its relay while running with a `nats:` section (tests and the bench). */
    running: () => (publisher && relay ? { publisher, relay } : undefined),
    start(deps: NatsDeps) {
      const cfg = deps.config.nats;
      if (!cfg) return;
      const env = opts.env ?? process.env;
      const credentials = cfg.credentials_env ? env[cfg.credentials_env] : undefined;
      if (cfg.credentials_env && !credentials)
        deps.logger.warn(
          { variable: cfg.credentials_env },
          'nats.credentials_env names a variable that is not set; connecting without credentials',
        );
      const p = new NatsPublisher(cfg, {
        gatewayUri: deps.config.server.public_url ?? DEFAULT_GATEWAY_URI,
        ...(credentials ? { credentials } : {}),
        logger: deps.logger,
      });
      const r = natsRelay(deps.db, deps.log, p, { logger: deps.logger, now: deps.now });
      r.start();
      publisher = p;
      relay = r;
    },
    // Every event is queued on the `nats` topic by its own append: one hop, no bus subscriber.
    outboxTopics: (deps: NatsDeps) => (deps.config.nats ? [NATS_TOPIC] : []),
    async stop() {
      await relay?.stop();
      await publisher?.close();
      relay = undefined;
      publisher = undefined;
    },
    degraded: () => publisher?.degraded(),
  };
}
