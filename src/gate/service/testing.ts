import { randomBytes } from 'node:crypto';
import { approvalsModule } from '../../approvals/module.js';
import { newId } from '../../envelope/index.js';
import { coreModule } from '../../server/core-routes.js';
import type { Module } from '../../kernel/module.js';
import { type TaskService, type TaskView, tasksPort } from '../../tasks/port.js';
import type { Dialect } from '../../store/port.js';
import { auth, type TestApp, testApp } from '../../server/testing.js';
import { type GateModule, type GateModuleOptions, gateModule } from '../module.js';

/** Test helpers for the gate module suites (not shipped behaviour). */

export const SIGNER = { id: 'test-key', secret: Buffer.alloc(32, 7) };

export interface GateHarness {
  t: TestApp;
  gate: GateModule;
  clock: { now: number };
  /** Steps per task id of the fake task service; `touch` adds one per step. */
  steps: Map<string, number>;
  post(
    path: string,
    body: unknown,
    role?: 'admin' | 'agent' | 'approver' | Record<string, string>,
  ): Promise<Response>;
  get(path: string, role?: 'admin' | 'agent' | 'approver'): Promise<Response>;
  /** An agent key bound to a fresh task, as the tasks module issues one. */
  taskKey(): { task_id: string; headers: Record<string, string> };
  cleanup(): Promise<void>;
}

/** A task service that counts steps in memory, so budget tests need no agent process. */
function fakeTasks(steps: Map<string, number>, clock: { now: number }): TaskService {
  const started = clock.now;
  const view = (id: string): TaskView => ({
    id,
    state: 'working',
    owner: 'alice',
    runtime: null,
    session_id: null,
    correlation_id: 'cor_test',
    title: 'test',
    created_at: new Date(started).toISOString(),
    updated_at: new Date(clock.now).toISOString(),
    last_activity_at: new Date(clock.now).toISOString(),
    steps: steps.get(id) ?? 0,
    lineage: { hop_count: 0, depth: 0 },
  });
  return {
    launch: () => Promise.reject(new Error('not in tests')),
    get: async (id) => (steps.has(id) ? view(id) : undefined),
    touch: async (id, opts) => {
      if (opts?.step) steps.set(id, (steps.get(id) ?? 0) + 1);
    },
    resume: () => Promise.reject(new Error('not in tests')),
  };
}

export async function gateHarness(
  dialect: Dialect,
  opts: {
    config?: Record<string, unknown>;
    module?: GateModuleOptions;
    approvals?: boolean;
  } = {},
): Promise<GateHarness> {
  const clock = { now: Date.parse('2026-06-01T10:00:00Z') };
  const steps = new Map<string, number>();
  const gate = gateModule({ signerKey: SIGNER, watch: false, sighup: false, ...opts.module });
  const modules: Module[] = [];
  modules.push(coreModule());
  if (opts.approvals !== false) modules.push(approvalsModule({ expiryWorker: false }));
  modules.push(gate);
  const t = await testApp({
    dialect,
    modules,
    config: opts.config ?? {},
    now: () => clock.now,
    ports: [[tasksPort, fakeTasks(steps, clock)]],
  });
  const headersFor = (role: 'admin' | 'agent' | 'approver' | Record<string, string>) =>
    typeof role === 'string' ? auth(role) : role;
  return {
    t,
    gate,
    clock,
    steps,
    post: (path, body, role = 'agent') =>
      Promise.resolve(
        t.app.request(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headersFor(role) },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      ),
    get: (path, role = 'admin') => Promise.resolve(t.app.request(path, { headers: auth(role) })),
    taskKey() {
      const task_id = newId('task', clock.now);
      const secret = `sbt_${randomBytes(16).toString('hex')}`;
      t.services.keys.add(secret, { name: `task:${task_id}`, role: 'agent', task_id });
      steps.set(task_id, 0);
      return { task_id, headers: { authorization: `Bearer ${secret}` } };
    },
    cleanup: () => t.cleanup(),
  };
}
