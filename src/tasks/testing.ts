import type { Module } from '../kernel/module.js';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testApp, type TestApp } from '../server/testing.js';
import { coreModule } from '../server/core-routes.js';
import type { LaunchRequest } from '../tasks/port.js';
import type { Dialect } from '../store/port.js';
import type { TasksConfigInput } from './config.js';
import { type TasksModule, type TasksModuleOptions, tasksModule } from './module.js';
import type { TaskRunner } from './service.js';

/** Test helpers for the tasks suites (not shipped behaviour). */

export const AGENT = fileURLToPath(new URL('./fixtures/agent.mjs', import.meta.url));
export const FAKE_BIN = fileURLToPath(new URL('./fixtures/bin', import.meta.url));

export interface TasksHarness {
  t: TestApp;
  mod: TasksModule;
  runner: TaskRunner;
  workDir: string;
  cleanup(): Promise<void>;
}

export async function harness(
  dialect: Dialect,
  opts: {
    config?: TasksConfigInput;
    module?: TasksModuleOptions;
    now?: () => number;
    /** More modules beside core and tasks (the effect ledger). */
    modules?: Module[];
  } = {},
): Promise<TasksHarness> {
  const workDir = mkdtempSync(join(tmpdir(), 'sb-tasks-'));
  const mod = tasksModule({
    runSupervisor: false,
    env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', SWITCHBOARD_VAULT_KEY: 'must-not-leak' },
    ...opts.module,
    config: { work_dir: workDir, kill_grace_seconds: 0.2, ...opts.config },
  });
  const t = await testApp({
    dialect,
    modules: [coreModule(), mod, ...(opts.modules ?? [])],
    ...(opts.now ? { now: opts.now } : {}),
  });
  const runner = mod.runner;
  if (!runner) throw new Error('tasks module did not start');
  return { t, mod, runner, workDir, cleanup: () => t.cleanup() };
}

/** A launch request caused by a webhook event already in the log. */
export async function launchRequest(
  h: TasksHarness,
  action: LaunchRequest['action'],
  over: Partial<Omit<LaunchRequest, 'action' | 'cause'>> = {},
): Promise<LaunchRequest> {
  const cause = await h.t.services.emit({
    type: 'integration.webhook.admitted',
    lineage: { hop_count: 2, depth: 1 },
  });
  return {
    trigger_id: 'pr-review',
    action,
    trusted: { repo: 'acme/widgets', pr: '42' },
    untrusted: { ref: 'vlt_test', digest: 'sha256:abc', text: 'Please review this PR.' },
    owner: 'alice',
    title: 'Review acme/widgets#42',
    cause,
    ...over,
  };
}

export function agentCommand(mode: 'ok' | 'fail' | 'hang' | 'stubborn', ...rest: string[]): string[] {
  return [process.execPath, AGENT, mode, ...rest];
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function settled(runner: TaskRunner, id: string, timeoutMs = 10_000) {
  return waitFor(async () => {
    const v = await runner.get(id);
    return v && ['completed', 'failed', 'canceled', 'rejected'].includes(v.state) ? v : undefined;
  }, timeoutMs);
}

export interface AgentReport {
  argv: string[];
  input: string;
  stdin: string;
  env: Record<string, string>;
  cwd: string;
  pid: number;
}

export async function report<T = AgentReport>(workDir: string, id: string, name = 'report.json'): Promise<T> {
  const path = join(workDir, id, name);
  await waitFor(() => existsSync(path) || undefined);
  return waitFor(() => {
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as T;
    } catch {
      return undefined;
    }
  });
}

export async function taskEvents(h: TasksHarness, id: string) {
  const events = await h.t.services.log.list({ taskId: id });
  return events.map((e) => e.envelope);
}
