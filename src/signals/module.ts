import { AppError } from '../errors/index.js';
import { approvalsPort } from '../approvals/port.js';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { type Deps, defineModule, type Module } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { reporterPort } from '../notify/port.js';
import { tasksPort } from '../tasks/port.js';
import { PhoneDesk } from './phone.js';
import { type SignalsConfig, signalsConfigSchema } from './config.js';
import { ACTIVITY_TYPES, SIGNAL_TYPES } from './mapping.js';
import { readAway, switchAndRecord, TENANT_OWNER } from './away.js';
import { awayPort, phonePort, sessionWatchPort } from './port.js';
import { awayRoutes } from './routes.js';
import { APPROVAL_EXPIRED, SignalRelay, SUBSCRIBER } from './service.js';
import { reportStalls, STALL_POLL_MS, stalledSessions } from './stall.js';

const requires = {
  reporter: optional(reporterPort),
  approvals: optional(approvalsPort),
  tasks: optional(tasksPort),
  /** The stall watch is a singleton: it runs on the cluster's leader (docs/scale.md). */
  cluster: optional(clusterPort),
};
const sections = { signals: signalsConfigSchema.prefault({}) };
/** Signals report through notify, take prompts to the phone through approvals, and read tasks. */
export type SignalsDeps = Deps<typeof requires, typeof sections>;

export interface SignalsModule extends Module<typeof requires, typeof sections> {
  /** The running relay handler (after `start`), for tests. */
  relay(): SignalRelay | undefined;
  /** One pass of the stall watch (tests move the clock); how many notices it sent. */
  stallDue(): Promise<number>;
}

export function signalsModule(): SignalsModule {
  let cfg: SignalsConfig | undefined;
  let handler: SignalRelay | undefined;
  let deps: SignalsDeps | undefined;
  const stallDue = async (): Promise<number> => (deps && cfg ? reportStalls(deps, cfg, deps.reporter) : 0);
  const config = (): SignalsConfig => {
    if (!cfg) throw new AppError('not_ready', 'the signals module is not running');
    return cfg;
  };
  return {
    ...defineModule({
      name: 'signals',
      config: sections,
      requires,
      provides: [phonePort, awayPort, sessionWatchPort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    relay: () => handler,
    stallDue,
    routes(app, services) {
      awayRoutes(app, services, config);
    },
    start(services) {
      cfg = services.config.signals;
      deps = services;
      const h = new SignalRelay(services, cfg, () => services.reporter);
      handler = h;
      services.provide(phonePort, new PhoneDesk(services, cfg));
      const c = cfg;
      services.provide(awayPort, {
        read: (owner) => readAway(services.db, owner ?? TENANT_OWNER, c, services.now()),
        set: (r) => switchAndRecord(services, c, r.owner ?? TENANT_OWNER, r.away, r.by),
      });
      services.provide(sessionWatchPort, { stalled: (limit) => stalledSessions(services.db, limit) });
    },
    subscribers() {
      const h = handler!;
      return [
        {
          name: SUBSCRIBER,
          accepts: (t) => SIGNAL_TYPES.has(t) || ACTIVITY_TYPES.has(t) || t === APPROVAL_EXPIRED,
          handle: async (event) => {
            await h.handle(event);
          },
        },
      ];
    },
    workers(services) {
      return [
        leaderOnly(() => (services as SignalsDeps).cluster, {
          name: 'signals.stalls',
          intervalMs: STALL_POLL_MS,
          tick: async () => {
            await stallDue();
          },
          onError: (err) => (services as SignalsDeps).logger.error({ err }, 'signals: stall watch failed'),
        }),
      ];
    },
    stop() {
      handler = undefined;
      deps = undefined;
    },
  };
}
