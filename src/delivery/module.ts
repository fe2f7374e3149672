import { blockedTarget, guardedSmtp } from '../channels/index.js';
import { type Egress, type EgressOptions, liveEgress } from '../egress/index.js';
import { AppError } from '../errors/index.js';
import { channelsConfigSchema } from '../channels/config.js';
import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { effectsPort } from '../effects/port.js';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { outboundPort } from '../notify/port.js';
import { type DeliveryConfig, deliveryConfigSchema, deliveryPolicies } from './config.js';
import { type ChannelEntry, DeliveryEngine, type EngineOptions } from './engine/engine.js';
import { deliveryMetrics } from './engine/metrics.js';
import { deliveryRoutes } from './engine/routes.js';
import { createDeliveryService, type DeliveryService } from './engine/service.js';
import { type DynamicSender, deliveryPort } from './port.js';
import { RECONCILE_DEFAULTS, Reconciler, type ReconcilerOptions } from './reconcile/reconciler.js';

export type {
  DeliveryService,
  EnqueueInput,
  Enqueued,
  DeliveryView,
  ReplayFilter,
  ReplayOutcome,
} from './engine/service.js';

export interface DeliveryModuleOptions {
  /** Overrides for the `delivery:` section (tests use short timeouts and schedules). */
  config?: Partial<DeliveryConfig>;
  /** Whether `start` runs the workers (tests drive `engine().runOnce()` by hand). */
  workers?: boolean;
  /** Where channel secrets (`*_env`) are read at each attempt; the process environment by default. */
  env?: NodeJS.ProcessEnv;
  /** Engine tuning: batch size, loops, poll interval, lease. */
  engine?: Pick<EngineOptions, 'batchSize' | 'loops' | 'pollMs' | 'leaseMs' | 'random'>;
  /** Overrides of the egress built from `egress.allow` (tests: loopback-only sockets, a fake dispatcher). */
  egress?: Partial<Omit<EgressOptions, 'allow'>>;
  /** Reconciler tuning (tests: ask at once instead of after 30 s). */
  reconcile?: Pick<ReconcilerOptions, 'afterMs' | 'maxChecks'>;
}

const sections = { delivery: deliveryConfigSchema.prefault({}), channels: channelsConfigSchema };
/** Effects (optional): every delivery is an effect with a receipt. Cluster (optional): the reconciler runs on the leader. */
const requires = { effects: optional(effectsPort), cluster: optional(clusterPort) };
type DeliveryDeps = Deps<typeof requires, typeof sections>;

export interface DeliveryModule extends Module<typeof requires, typeof sections> {
  service(): DeliveryService | undefined;
  engine(): DeliveryEngine | undefined;
  reconciler(): Reconciler | undefined;
}

/**
 * The channels after a config reload: every channel named at start, its entry taken from the reloaded
 * config when it is still there with the same type — so a replaced token (`token_env`, a URL, a
 * `status_url`) applies to the next attempt — else kept as it was. Names are not added or removed
 * live: notify routes to the names it started with (docs/delivery.md, "Revoked channels"). The same
 * object when nothing changed, so the engine's parsed-config cache stays.
 */
export function followReload(
  serving: Record<string, ChannelEntry>,
  reloaded: Record<string, ChannelEntry> | undefined,
): Record<string, ChannelEntry> {
  if (!reloaded) return serving;
  let changed = false;
  const out: Record<string, ChannelEntry> = {};
  for (const [name, entry] of Object.entries(serving)) {
    const next = reloaded[name];
    const take =
      next !== undefined && next.type === entry.type && JSON.stringify(next) !== JSON.stringify(entry);
    out[name] = take ? next : entry;
    changed ||= take;
  }
  return changed ? out : serving;
}

function readConfig(deps: DeliveryDeps, overrides?: Partial<DeliveryConfig>): DeliveryConfig {
  // A test's overrides may carry partial nested sections (`breaker: { min_attempts }`): parse that merge.
  return overrides
    ? deliveryConfigSchema.parse({ ...deps.config.delivery, ...overrides })
    : deps.config.delivery;
}

/**
 * The delivery engine: the `deliveries` and `endpoints` tables (migration 0200), the workers, and
 * the admin API (`GET /v1/deliveries`, `POST /v1/deliveries/replay`). Sets `services.deliveries`.
 */
export function deliveryModule(opts: DeliveryModuleOptions = {}): DeliveryModule {
  let service: DeliveryService | undefined;
  let engine: DeliveryEngine | undefined;
  let reconciler: Reconciler | undefined;
  let egress: Egress | undefined;
  let offReload: (() => void) | undefined;
  /** The channels serving after a config reload (followReload); before one, the config's own. */
  let reloaded: Record<string, ChannelEntry> | undefined;
  const senders = new Map<string, DynamicSender>();
  const dynamic = (destination: string) => senders.get(destination.split(':', 1)[0]!);

  const ensure = (s: DeliveryDeps): DeliveryService => {
    if (service) return service;
    const policies = deliveryPolicies(readConfig(s, opts.config));
    egress = liveEgress(s, opts.egress);
    const env = opts.env ?? process.env;
    const channels = () => reloaded ?? (s.config.channels as Record<string, ChannelEntry>);
    const metrics = deliveryMetrics(s.metrics.registry, () => s.db);
    const onAppended = (types: string[]) => {
      for (const type of types) s.metrics.eventsAppended.inc({ type });
    };
    engine = new DeliveryEngine({
      db: s.db,
      log: s.log,
      channels,
      policies,
      egress,
      smtp: guardedSmtp(egress),
      secret: (name) => env[name],
      now: s.now,
      metrics,
      onAppended,
      logger: s.logger,
      dynamic,
      effects: () => s.effects,
      ...opts.engine,
    });
    const e = engine;
    const guard = egress;
    reconciler = new Reconciler({
      db: s.db,
      log: s.log,
      channels,
      egress,
      secret: (name) => env[name],
      now: s.now,
      effects: () => s.effects,
      wake: () => e.wake(),
      logger: s.logger,
      ...opts.reconcile,
    });
    service = createDeliveryService({
      db: s.db,
      log: s.log,
      channels,
      now: s.now,
      wake: () => e.rowDue(),
      onAppended,
      endpointPolicy: policies,
      retry: policies.retry,
      // Read on every enqueue: a reloaded `egress.allow` is the one judging the next delivery.
      get policy() {
        return guard.policy;
      },
      secret: (name) => env[name],
      dynamic,
      effects: () => s.effects,
      immediate: {
        admitNow: (tx, destination) => e.admitNow(tx, destination),
        sendLeased: (row) => e.sendLeased(row),
      },
    });
    service.addSender = (sender) => {
      senders.set(sender.type, sender);
    };
    return service;
  };
  const running = (): DeliveryService => {
    if (!service) throw new AppError('not_ready', 'the delivery module has not started');
    return service;
  };

  return {
    ...defineModule({
      name: 'delivery',
      config: sections,
      requires,
      provides: [deliveryPort, outboundPort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    service: () => service,
    engine: () => engine,
    reconciler: () => reconciler,
    routes(app, s) {
      deliveryRoutes(app, s, running);
    },
    start(s) {
      const svc = ensure(s);
      warnBlockedChannels(s, egress!, opts.env ?? process.env);
      // After an edit of `egress`, say again which channels the list now serving refuses.
      offReload = s.reloads.onReload((c) => {
        const serving = reloaded ?? (s.config.channels as Record<string, ChannelEntry>);
        const next = followReload(serving, (c as { channels?: Record<string, ChannelEntry> }).channels);
        if (next !== serving) {
          reloaded = next;
          // A credential fixed in the file lifts a channel's revoked mark now, not at its next send.
          void svc
            .recheckRevoked()
            .catch((err: unknown) => s.logger.error({ err }, 'delivery: revoked-channel recheck failed'));
        }
        if (egress) warnBlockedChannels(s, egress, opts.env ?? process.env);
      });
      // A restart with a new credential lifts the mark at once as well.
      void svc
        .recheckRevoked()
        .catch((err: unknown) => s.logger.error({ err }, 'delivery: revoked-channel recheck failed'));
      s.provide(deliveryPort, svc);
      s.provide(outboundPort, svc);
    },
    started() {
      // Not in start: a row claimed before a later module registered its sender (the A2A push sender,
      // in a2a's start) would be refused as "no longer configured" and dead-lettered on a restart.
      if (opts.workers !== false) engine?.start();
    },
    workers(s) {
      if (opts.workers === false) return [];
      ensure(s);
      const r = reconciler!;
      // One reconciler per cluster (docs/scale.md): two would ask the provider twice about one row; the
      // conditional updates already keep a second verdict from settling it twice.
      return [
        leaderOnly(() => s.cluster, {
          name: 'delivery.reconcile',
          intervalMs: RECONCILE_DEFAULTS.intervalMs,
          tick: async () => {
            await r.tick();
          },
        }),
      ];
    },
    async stop() {
      offReload?.();
      await engine?.stop();
      await egress?.close();
      service = undefined;
      engine = undefined;
      reconciler = undefined;
    },
  };
}

/**
 * A channel whose URL the egress guard refuses (a `url_env` holding `file:`, `ws:` or a private
 * address) could never deliver: say so at start-up, naming the key, rather than at the first message.
 * Its deliveries are recorded `dead` / blocked at enqueue; `switchboard doctor` fails on it.
 */
function warnBlockedChannels(s: DeliveryDeps, egress: Egress, env: NodeJS.ProcessEnv): void {
  for (const [name, entry] of Object.entries(s.config.channels)) {
    const refused = blockedTarget(entry, (k) => env[k], egress.policy);
    if (!refused) continue;
    s.logger.warn(
      {
        channel: name,
        key: refused.target.key,
        ...(refused.target.env ? { env: refused.target.env } : {}),
        reason: refused.blocked.reason,
      },
      `channels.${name}: its ${refused.target.key} is refused by the egress guard (${refused.blocked.reason}: ${refused.blocked.detail}); every delivery to it is recorded blocked`,
    );
  }
}
