import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

/** Where the SQLite store of this config lives, or undefined on PostgreSQL. */
export function sqlitePath(loaded: LoadedConfig): string | undefined {
  const { config } = loaded;
  return config.store.database_url ? undefined : join(resolve(config.data_dir), 'switchboard.db');
}

/**
 * For commands that only read (`events tail`, `audit verify`): the gateway's store, never a new one. A
 * missing SQLite file means this is not where the gateway keeps its data; creating an empty store there
 * would answer "0 events, chain intact" about nothing.
 */
export async function openExistingStore(loaded: LoadedConfig): Promise<Db> {
  const path = sqlitePath(loaded);
  if (path && !existsSync(path)) {
    throw new Error(
      `no store at ${path} (config: ${loaded.source}); nothing was created. This command reads the gateway's store: run it in the gateway's folder, pass -c <the gateway's switchboard.yaml>, or set SWITCHBOARD_DATA_DIR (or SWITCHBOARD_DATABASE_URL) to what the gateway uses`,
    );
  }
  return openCliStore(loaded);
}
