import { requireRole } from '../kernel/auth.js';
import type { App, Module, Services } from '../kernel/module.js';
import { capabilityRows } from './index.js';
import { type HooksConfig, parseHooksConfig } from './http/config.js';
import { handleHook } from './http/route.js';

/**
 * The runtime fabric on the gateway: every runtime's hooks arrive at one route, are recorded, decided
 * by the gate when the runtime is waiting, and answered in that runtime's own words (docs/hooks.md).
 */
export function runtimesModule(options: { hooks?: Partial<HooksConfig> } = {}): Module {
  let config: HooksConfig = parseHooksConfig(options.hooks);
  return {
    name: 'runtimes',
    routes(app: App, s: Services) {
      app.get('/v1/runtimes', requireRole(s.keys, 'admin', 'agent', 'approver'), (c) =>
        c.json({ runtimes: capabilityRows() }),
      );
      app.post('/v1/runtimes/:runtime/hooks', requireRole(s.keys, 'agent'), (c) =>
        handleHook(c, s, () => config),
      );
    },
    start(s: Services) {
      // The `hooks:` section, until the config schema carries it; explicit options win (tests).
      const section = (s.config as unknown as { hooks?: Record<string, unknown> }).hooks;
      config = parseHooksConfig({ ...section, ...options.hooks });
    },
  };
}
