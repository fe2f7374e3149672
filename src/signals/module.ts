import { AppError } from '../errors/index.js';
import type { Module, Services } from '../kernel/module.js';
import { PhoneDesk } from './phone.js';
import { type SignalsConfig, signalsConfigSchema } from './config.js';
import { ACTIVITY_TYPES, SIGNAL_TYPES } from './mapping.js';
import { awayRoutes } from './routes.js';
import { APPROVAL_EXPIRED, type Reporter, SignalRelay, SUBSCRIBER } from './service.js';

export interface SignalsModuleOptions {
  /**
   * The notify module's reporter (`notifyModule().notifier()`): signals go through the same path as
   * `report_progress`. A getter, because the notifier exists only once notify has started.
   */
  reporter: () => Reporter | undefined;
}

export interface SignalsModule extends Module {
  /** The running relay handler (after `start`), for tests. */
  relay(): SignalRelay | undefined;
}

export function signalsModule(opts: SignalsModuleOptions): SignalsModule {
  let cfg: SignalsConfig | undefined;
  let handler: SignalRelay | undefined;
  let services: Services | undefined;
  const config = (): SignalsConfig => {
    if (!cfg) throw new AppError('not_ready', 'the signals module is not running');
    return cfg;
  };
  return {
    name: 'signals',
    relay: () => handler,
    routes(app, services) {
      awayRoutes(app, services, config);
    },
    start(s) {
      services = s;
      cfg = signalsConfigSchema.parse(services.config.signals ?? {});
      const h = new SignalRelay(services, cfg, opts.reporter);
      handler = h;
      services.phone = new PhoneDesk(services, cfg);
      services.relay.subscribe({
        name: SUBSCRIBER,
        accepts: (t) => SIGNAL_TYPES.has(t) || ACTIVITY_TYPES.has(t) || t === APPROVAL_EXPIRED,
        handle: async (event) => {
          await h.handle(event);
        },
      });
    },
    stop() {
      handler = undefined;
      if (services?.phone instanceof PhoneDesk) services.phone = undefined;
    },
  };
}
