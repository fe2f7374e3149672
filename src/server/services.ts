import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { CoreConfig } from '../config/schema.js';
import type { EnvelopeInput } from '../envelope/index.js';
import { KeyRing } from '../kernel/auth.js';
import { createLogger } from '../kernel/logger.js';
import { Metrics } from '../kernel/metrics.js';
import type { Services } from '../kernel/module.js';
import { EventLog } from '../log/log.js';
import { Relay } from '../log/relay.js';
import { resolveVaultKey, Vault } from '../log/vault.js';
import type { MigrationFolder } from '../store/migrate.js';
import { openStore } from '../store/open.js';
import type { Db } from '../store/port.js';
import { appMigrations } from './modules.js';
import { startWorker } from '../kernel/worker.js';
import { ReloadHub } from '../kernel/reload.js';

export interface BuildOptions {
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** An already open store (tests); otherwise opened from config. */
  db?: Db;
  now?: () => number;
  configSource?: string;
  defaultMetrics?: boolean;
  /** The migrations to bring an opened store to (default: the log's and every app module's). */
  migrations?: MigrationFolder[];
  /** Where config reloads are published (`Services.reloads`); a hub of its own by default. */
  reloads?: ReloadHub;
  /** Aborted when the server begins to stop (`Services.stopping`); by default never. */
  stopping?: AbortSignal;
}

/** Opens the store, the vault key and the log; everything a module needs, built once. */
export async function buildServices(config: CoreConfig, opts: BuildOptions = {}): Promise<Services> {
  const env = opts.env ?? process.env;
  const logger = opts.logger ?? createLogger(config.log.level);
  const now = opts.now ?? Date.now;
  const dataDir = resolve(config.data_dir);
  const db =
    opts.db ??
    (await openStore({
      databaseUrl: config.store.database_url,
      dataDir,
      sqliteSynchronous: config.store.sqlite_synchronous,
      migrations: opts.migrations ?? appMigrations(),
    }));
  const { key, source } = resolveVaultKey(config.vault.key_env, join(dataDir, 'vault.key'), env);
  if (source.kind === 'file' && source.created) {
    logger.warn(
      { path: source.path },
      `generated a vault key at ${source.path}; back it up, or set ${config.vault.key_env} (payloads sealed with it cannot be read without it)`,
    );
  }
  const metrics = new Metrics({ defaultMetrics: opts.defaultMetrics ?? true });
  const defaults = { tenant_id: config.tenant.id, environment: config.tenant.environment };
  const log = new EventLog(db, defaults, now);
  // Pipelined: a claim takes each correlation's queued rows too, and the next claim overlaps the handling.
  const relay = new Relay(db, log, { logger, now, run: startWorker, pipeline: true });
  metrics.watch({ store: () => db.stats?.(), relay: () => relay.stats() });
  const keys = new KeyRing(config.auth.keys, env);
  return {
    config,
    db,
    log,
    vault: new Vault(db, key, now),
    vaultKey: key,
    relay,
    logger,
    metrics,
    keys,
    configSource: opts.configSource ?? 'built-in defaults',
    now,
    stopping: opts.stopping ?? new AbortController().signal,
    reloads: opts.reloads ?? new ReloadHub(),
    async emit(input: EnvelopeInput, tx?: Db) {
      const env = await log.append(input, tx);
      metrics.eventsAppended.inc({ type: env.type });
      return env;
    },
  };
}
