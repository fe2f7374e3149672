import { a2aModule } from '../a2a/module.js';
import { agentsModule } from '../agents/module.js';
import { approvalsModule } from '../approvals/module.js';
import { callbacksModule } from '../callbacks/module.js';
import { clusterModule } from '../cluster/module.js';
import { consoleModule } from '../console/module.js';
import { costsModule } from '../costs/module.js';
import { deliveryModule } from '../delivery/module.js';
import { effectsModule } from '../effects/module.js';
import { gateModule } from '../gate/module.js';
import { ingressModule } from '../ingress/module.js';
import { LOG_MIGRATIONS } from '../log/index.js';
import { mcpModule } from '../mcp/module.js';
import { natsModule } from '../nats/module.js';
import { telemetryModule } from '../telemetry/module.js';
import { notifyModule } from '../notify/module.js';
import { reachModule } from '../reach/module.js';
import { repliesModule } from '../replies/module.js';
import { runtimeIntents } from '../runtimes/index.js';
import { runtimesModule } from '../runtimes/module.js';
import { signalsModule } from '../signals/module.js';
import type { Module } from '../kernel/module.js';
import type { MigrationFolder } from '../store/migrate.js';
import { takeoverModule } from '../takeover/module.js';
import { tasksModule } from '../tasks/module.js';
import { coreModule } from './core-routes.js';

/**
 * Every module the gateway runs. A new module is one line here; the kernel orders start-up from the
 * manifests' `requires`, so the order of this list only breaks ties.
 */
export function allModules() {
  return [
    // First: it starts tracing before any module works, and stops last.
    telemetryModule(),
    coreModule(),
    clusterModule(),
    effectsModule(),
    deliveryModule(),
    approvalsModule(),
    tasksModule(),
    costsModule(),
    gateModule({ intents: runtimeIntents }),
    repliesModule(),
    callbacksModule(),
    ingressModule(),
    runtimesModule(),
    notifyModule(),
    mcpModule(),
    signalsModule(),
    reachModule(),
    consoleModule(),
    takeoverModule(),
    a2aModule(),
    agentsModule(),
    natsModule(),
  ] as const;
}

export type AppModules = ReturnType<typeof allModules>;

/** Every migration folder the app's store needs: the log's (events, outbox, inbox, vault) and each module's. */
export function appMigrations(
  modules: readonly { migrations?: MigrationFolder }[] = allModules(),
): MigrationFolder[] {
  return [LOG_MIGRATIONS, ...modules.flatMap((m) => (m.migrations ? [m.migrations] : []))];
}

/**
 * The app's modules with `modules` in place of (or beside) those of the same name: what a process
 * running `modules` must know of config keys and tables. A test that runs a few modules still parses
 * the whole config and has every table; a module added in a test (test/e2e/sample-module.test.ts) is
 * picked up as if listed above.
 */
export function withAppModules(modules: readonly Module[]): Module[] {
  const names = new Set(modules.map((m) => m.name));
  return [...allModules().filter((m) => !names.has(m.name)), ...modules];
}
