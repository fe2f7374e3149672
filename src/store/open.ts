import { join } from 'node:path';
import { AppError } from '../errors/index.js';
import { type MigrationFolder, migrate } from './migrate.js';
import type { Db } from './port.js';
import { PostgresDb } from './postgres.js';
import { SqliteDb } from './sqlite.js';

export interface StoreOptions {
  /** `postgres://…` selects PostgreSQL; unset means SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  sqliteSynchronous?: 'full' | 'normal';
  /** PostgreSQL schema (tests isolate suites with it). */
  schema?: string;
  /** Every owner's migration folder (the app root collects them from the module manifests). */
  migrations: readonly MigrationFolder[];
}

/** Opens the configured store and brings its schema up to date. */
export async function openStore(opts: StoreOptions): Promise<Db> {
  if (opts.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(opts.databaseUrl)) {
      throw new AppError(
        'bad_request',
        'SWITCHBOARD_DATABASE_URL must start with postgres:// (unset it to use SQLite)',
      );
    }
    const db = new PostgresDb({ url: opts.databaseUrl, ...(opts.schema ? { schema: opts.schema } : {}) });
    try {
      await db.open();
      await migrate(db, opts.migrations);
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
    return db;
  }
  const db = new SqliteDb({
    path: join(opts.dataDir, 'switchboard.db'),
    synchronous: opts.sqliteSynchronous ?? 'full',
  });
  await migrate(db, opts.migrations);
  return db;
}

/** A redacted form of a database URL, safe for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable url>';
  }
}
