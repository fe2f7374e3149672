import { requireRole } from '../kernel/auth.js';
import { approvalsPort } from '../approvals/port.js';
import { gatePort } from '../gate/port.js';
import { type Deps, defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { phonePort } from '../signals/port.js';
import { tasksPort } from '../tasks/port.js';
import { capabilityRows } from './index.js';
import { type HooksConfig, hooksConfigSchema, parseHooksConfig } from './http/config.js';
import { handleHook } from './http/route.js';

/**
 * The runtime fabric on the gateway: every runtime's hooks arrive at one route, are recorded, decided
 * by the gate when the runtime is waiting, and answered in that runtime's own words (docs/hooks.md).
 */
/**
 * The hook route asks the gate, holds approvals, touches tasks and may take a prompt to the phone. The
 * gate is optional on purpose: without one the route still answers, failing closed (`unavailable`).
 */
const requires = {
  gate: optional(gatePort),
  approvals: optional(approvalsPort),
  tasks: optional(tasksPort),
  phone: optional(phonePort),
};
const sections = { hooks: hooksConfigSchema.prefault({}) };
export type RuntimesDeps = Deps<typeof requires, typeof sections>;

export function runtimesModule(options: { hooks?: Partial<HooksConfig> } = {}) {
  let config: HooksConfig = parseHooksConfig(options.hooks);
  return defineModule({
    name: 'runtimes',
    config: sections,
    requires,
    routes(app, s) {
      app.get('/v1/runtimes', requireRole(s.keys, 'admin', 'agent', 'approver'), (c) =>
        c.json({ runtimes: capabilityRows() }),
      );
      app.post('/v1/runtimes/:runtime/hooks', requireRole(s.keys, 'agent'), (c) =>
        handleHook(c, s, () => config),
      );
    },
    start(s) {
      config = { ...s.config.hooks, ...options.hooks };
    },
  });
}
