import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Kernel } from '../kernel/kernel.js';
import type { App, Module, Services } from '../kernel/module.js';
import type { Port } from '../kernel/port.js';
import type { Dialect } from '../store/port.js';
import { freshStore } from '../store/testing.js';
import { createApp } from './app.js';
import { type Config, configSpec, parseConfig } from './config.js';
import { allModules, appMigrations, withAppModules } from './modules.js';
import { migrate } from '../store/migrate.js';
import { type RunningServer, startServer } from './serve.js';
import { buildServices } from './services.js';

export const KEYS = {
  admin: 'admin-key-0123456789abcdef',
  agent: 'agent-key-0123456789abcdef',
  approver: 'approver-key-0123456789abcdef',
} as const;

export function auth(role: keyof typeof KEYS): Record<string, string> {
  return { authorization: `Bearer ${KEYS[role]}` };
}

export interface TestApp {
  app: App;
  services: Services;
  config: Config;
  kernel: Kernel;
  /** The service behind a port (a module's real one, or the fake a test put there). */
  port<T>(p: Port<T>): T;
  /** Puts a fake behind a port, in place of (or without) the module that provides it. */
  provide<T>(p: Port<T>, impl: T | undefined): void;
  cleanup(): Promise<void>;
}

/** An in-process app on a fresh store with one key per role; no socket needed (`app.request`). */
export async function testApp(
  opts: {
    dialect?: Dialect;
    config?: Record<string, unknown>;
    modules?: readonly Module[];
    now?: () => number;
    /** Fakes behind ports before the modules start (a module that requires one finds it there). */
    ports?: [Port<unknown>, unknown][];
  } = {},
): Promise<TestApp> {
  const store = await freshStore(opts.dialect ?? 'sqlite');
  const known = withAppModules(opts.modules ?? []);
  // A module that is not in the app's list (a test's own) brings its tables and config keys too.
  await migrate(store.db, appMigrations(known));
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-app-'));
  const config = parseConfig(
    {
      data_dir: dataDir,
      auth: {
        keys: [
          { name: 'ops', role: 'admin', key: KEYS.admin },
          { name: 'bot', role: 'agent', key: KEYS.agent },
          { name: 'me', role: 'approver', key: KEYS.approver },
        ],
      },
      ...opts.config,
    },
    'test',
    configSpec(known),
  );
  const services = await buildServices(config, {
    db: store.db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const kernel = new Kernel(services, opts.modules ?? allModules(), {
    external: (opts.ports ?? []).map(([p]) => p),
  });
  for (const [p, impl] of opts.ports ?? []) kernel.ports.set(p, impl);
  const app = createApp(services, kernel);
  await kernel.start();
  return {
    app,
    services,
    config,
    kernel,
    port: <T>(p: Port<T>) => {
      const impl = kernel.get(p);
      if (impl === undefined) throw new Error(`no module provides port ${p.id} in this test app`);
      return impl;
    },
    provide: (p, impl) => kernel.ports.set(p, impl),
    async cleanup() {
      await kernel.stop();
      await services.relay.stop();
      await store.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestGateway {
  /** The running server; `gateway.url` is where a phone (the test) reaches it. */
  gateway: RunningServer;
  stop(): Promise<void>;
}

/**
 * A real gateway on a socket (port 0) over a fresh store, with the modules given, for end-to-end tests
 * whose peers (a delivery receiver, a pressed button) talk HTTP to it. The config is taken as is (keys
 * included); `data_dir` and the port are filled in. With `publicUrl: true`, `server.public_url` is set
 * to the server's own address once it is known, so links and buttons point back at it.
 */
export async function testGateway(opts: {
  dialect: Dialect;
  config: Record<string, unknown>;
  modules: readonly Module[];
  env?: Record<string, string>;
  publicUrl?: boolean;
}): Promise<TestGateway> {
  const store = await freshStore(opts.dialect);
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-gw-'));
  const server = (opts.config.server ?? {}) as Record<string, unknown>;
  const config = parseConfig({ ...opts.config, data_dir: dataDir, server: { ...server, port: 0 } });
  const gateway = await startServer(config, {
    db: store.db,
    logger: pino({ level: 'silent' }),
    env: opts.env ?? {},
    defaultMetrics: false,
    modules: opts.modules,
  });
  if (opts.publicUrl) gateway.services.config.server.public_url = gateway.url;
  return {
    gateway,
    async stop() {
      await gateway.stop();
      await store.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
