import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createApp } from '../../src/server/app.js';
import type { App, Module, Services } from '../../src/server/module.js';
import { allModules } from '../../src/server/modules.js';
import { buildServices } from '../../src/server/services.js';
import type { Dialect } from '../../src/store/port.js';
import { freshStore } from './db.js';

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
  cleanup(): Promise<void>;
}

/** An in-process app on a fresh store with one key per role; no socket needed (`app.request`). */
export async function testApp(
  opts: { dialect?: Dialect; config?: Record<string, unknown>; modules?: Module[]; now?: () => number } = {},
): Promise<TestApp> {
  const store = await freshStore(opts.dialect ?? 'sqlite');
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-app-'));
  const config = parseConfig({
    data_dir: dataDir,
    auth: {
      keys: [
        { name: 'ops', role: 'admin', key: KEYS.admin },
        { name: 'bot', role: 'agent', key: KEYS.agent },
        { name: 'me', role: 'approver', key: KEYS.approver },
      ],
    },
    ...opts.config,
  });
  const services = await buildServices(config, {
    db: store.db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const modules = opts.modules ?? allModules();
  const app = createApp(services, modules);
  for (const m of modules) await m.start?.(services);
  return {
    app,
    services,
    config,
    async cleanup() {
      for (const m of [...modules].reverse()) await m.stop?.();
      await services.relay.stop();
      await store.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
