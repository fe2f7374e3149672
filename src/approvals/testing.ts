import { auth, type TestApp, testApp } from '../server/testing.js';
import { coreModule } from '../server/core-routes.js';
import type { Dialect } from '../store/port.js';
import { type ApprovalsModule, approvalsModule, type ApprovalsModuleOptions } from './module.js';
import type { Approvals } from './service.js';

/** A fixed link key for tests, so tokens can be forged and tampered with on purpose. */
export const TEST_LINK_KEY = Buffer.alloc(32, 7);

export interface ApprovalsHarness extends TestApp {
  module: ApprovalsModule;
  approvals: Approvals;
  clock: { now: number };
  ask(
    body?: Record<string, unknown>,
    role?: 'agent' | 'admin' | 'approver',
    query?: string,
  ): Promise<Response>;
  decide(
    id: string,
    decision: string,
    role?: 'agent' | 'admin' | 'approver',
    comment?: string,
  ): Promise<Response>;
  /** Types of the events in the log, oldest first. */
  eventTypes(): Promise<string[]>;
}

export async function approvalsHarness(
  dialect: Dialect,
  opts: ApprovalsModuleOptions & { realClock?: boolean } = {},
): Promise<ApprovalsHarness> {
  const clock = { now: Date.now() };
  const module = approvalsModule({
    expiryWorker: false,
    linkKey: TEST_LINK_KEY,
    ...opts,
    config: { wait_poll_ms: 25, ...opts.config },
  });
  const t = await testApp({
    dialect,
    modules: [coreModule(), module],
    ...(opts.realClock ? {} : { now: () => clock.now }),
  });
  const json = (role: 'agent' | 'admin' | 'approver') => ({
    ...auth(role),
    'content-type': 'application/json',
  });
  return {
    ...t,
    module,
    approvals: module.service()!,
    clock,
    ask: (body = { action: 'deploy', reason: 'ship it' }, role = 'agent', query = '') =>
      Promise.resolve(
        t.app.request(`/v1/approvals${query}`, {
          method: 'POST',
          headers: json(role),
          body: JSON.stringify(body),
        }),
      ),
    decide: (id, decision, role = 'approver', comment) =>
      Promise.resolve(
        t.app.request(`/v1/approvals/${id}/decision`, {
          method: 'POST',
          headers: json(role),
          body: JSON.stringify({ decision, ...(comment ? { comment } : {}) }),
        }),
      ),
    async eventTypes() {
      const rows = await t.services.db.query<{ type: string }>({
        text: 'SELECT type FROM events ORDER BY seq',
      });
      return rows.map((r) => r.type);
    },
  };
}
