import { clusterPort, leaderOnly } from '../cluster/port.js';
import { AppError } from '../errors/index.js';
import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { startWorker } from '../kernel/worker.js';
import { type ApprovalsConfig, approvalsConfigSchema } from './config.js';
import { type Worker, expiryWorker } from './expiry.js';
import { linkRoutes } from './link-routes.js';
import { approvalsPort } from './port.js';
import { deriveLinkKey } from './links.js';
import { approvalRoutes } from './routes.js';
import { Approvals } from './service.js';

export interface ApprovalsModuleOptions {
  /** Overrides for the `approvals:` config section (tests use short intervals). */
  config?: Partial<ApprovalsConfig>;
  /** The link HMAC key; by default derived from the vault key (links.ts says why). */
  linkKey?: Uint8Array;
  /** Whether `start` runs the expiry worker (tests drive `expireDue` by hand). */
  expiryWorker?: boolean;
}

const sections = { approvals: approvalsConfigSchema.prefault({}) };
/**
 * With replicas: a decision on one wakes the waiters on all (the cluster's broadcast), and expiry is a
 * singleton on the leader (docs/scale.md).
 */
const requires = { cluster: optional(clusterPort) };
type ApprovalsDeps = Deps<typeof requires, typeof sections>;

export interface ApprovalsModule extends Module<typeof requires, typeof sections> {
  /** The running service (after `routes` or `start`), e.g. for `approvalLinks` from the notify module. */
  service(): Approvals | undefined;
}

function readConfig(deps: ApprovalsDeps, overrides: Partial<ApprovalsConfig> = {}): ApprovalsConfig {
  return { ...deps.config.approvals, ...overrides };
}

/**
 * Approvals: `POST/GET /v1/approvals…`, the signed-link page `/a/{token}`, and the expiry worker.
 * Provides `approvalsPort`.
 */
export function approvalsModule(opts: ApprovalsModuleOptions = {}): ApprovalsModule {
  let impl: Approvals | undefined;
  let config: ApprovalsConfig | undefined;
  let worker: Worker | undefined;

  const ensure = (services: ApprovalsDeps): Approvals => {
    if (impl) return impl;
    config = readConfig(services, opts.config);
    const linkKey = opts.linkKey ?? deriveLinkKey(services.vaultKey);
    impl = new Approvals(services, {
      ttlMs: config.ttl_seconds * 1000,
      pollMs: config.wait_poll_ms,
      linkKey,
    });
    return impl;
  };
  const running = (): Approvals => {
    if (!impl) throw new AppError('not_ready', 'the approvals module has not started');
    return impl;
  };

  return {
    ...defineModule({
      name: 'approvals',
      config: sections,
      requires,
      provides: [approvalsPort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    service: () => impl,
    routes(app, services) {
      ensure(services);
      approvalRoutes(app, services, running, () => config?.max_wait_seconds ?? 0);
      linkRoutes(app, running, services.now);
    },
    start(services) {
      const approvals = ensure(services);
      services.provide(approvalsPort, approvals);
      approvals.useBus(services.cluster);
      if (opts.expiryWorker !== false) {
        const spec = expiryWorker({
          sweep: () => approvals.expireDue(),
          intervalMs: config!.expiry_sweep_ms,
          logger: services.logger,
        });
        worker = startWorker(leaderOnly(() => services.cluster, spec));
      }
    },
    async stop() {
      await worker?.stop();
      worker = undefined;
      impl?.useBus(undefined);
    },
  };
}
