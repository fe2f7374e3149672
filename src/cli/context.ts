import { resolve } from 'node:path';
import { configPath, type LoadedConfig } from '../config/load.js';
import { type Config, loadConfig } from '../server/config.js';
import { appMigrations } from '../server/modules.js';
import { openStore } from '../store/open.js';
import type { Db } from '../store/port.js';

export function loadCliConfig(opts: { config?: string }): LoadedConfig<Config> {
  const path = opts.config ? resolve(opts.config) : configPath();
  return loadConfig({ path });
}

export async function openCliStore(loaded: LoadedConfig): Promise<Db> {
  const { config } = loaded;
  return openStore({
    databaseUrl: config.store.database_url,
    dataDir: resolve(config.data_dir),
    sqliteSynchronous: config.store.sqlite_synchronous,
    migrations: appMigrations(),
  });
}
