import { defineModule, type Module } from '../kernel/module.js';
import { createEffects } from './service.js';
import { type EffectsPort, effectsPort } from './port.js';
import { effectsRoutes } from './routes.js';

export interface EffectsModule extends Module {
  service(): EffectsPort | undefined;
}

/**
 * Effects with receipts (issue 20 point 1): the `effects` table (migration 1300), `effectsPort`
 * (`prepared`, `receipted`, `trace`, `unsettled`), which tasks, reach and delivery call when it is
 * there, and the admin routes `GET /v1/effects` and `GET /v1/effects/trace/{id}`.
 */
export function effectsModule(): EffectsModule {
  let service: EffectsPort | undefined;
  return {
    ...defineModule({
      name: 'effects',
      provides: [effectsPort],
      migrations: new URL('./migrations/', import.meta.url),
      routes(app, s) {
        effectsRoutes(app, s, () => service);
      },
      start(s) {
        service = createEffects({ db: s.db, log: s.log, emit: (e, db) => s.emit(e, db), now: s.now });
        s.provide(effectsPort, service);
      },
      stop() {
        service = undefined;
      },
    }),
    service: () => service,
  };
}
