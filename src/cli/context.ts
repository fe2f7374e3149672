import { resolve } from 'node:path';
import { configPath, type LoadedConfig, loadConfig } from '../config/load.js';
import { moduleConfigChecks } from '../server/checks.js';
import { openStore } from '../store/open.js';
import type { Db } from '../store/port.js';

export function loadCliConfig(opts: { config?: string }): LoadedConfig {
  const path = opts.config ? resolve(opts.config) : configPath();
  return loadConfig({ path, checks: moduleConfigChecks() });
}

export async function openCliStore(loaded: LoadedConfig): Promise<Db> {
  const { config } = loaded;
  return openStore({
    databaseUrl: config.store.database_url,
    dataDir: resolve(config.data_dir),
    sqliteSynchronous: config.store.sqlite_synchronous,
  });
}
