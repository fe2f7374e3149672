import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { appMigrations } from '../server/modules.js';
import { migrate } from './migrate.js';
import type { Db, Dialect, Sql } from './port.js';
import { PostgresDb } from './postgres.js';
import { SqliteDb } from './sqlite.js';

/** The PostgreSQL the tests use; CI sets SWITCHBOARD_REQUIRE_PG=1 so an unreachable one fails instead of skipping. */
export const PG_URL = process.env.SWITCHBOARD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const PG_REQUIRED = process.env.SWITCHBOARD_REQUIRE_PG === '1';

let pgReachable: Promise<boolean> | undefined;

export function pgAvailable(): Promise<boolean> {
  pgReachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch (err) {
      if (PG_REQUIRED)
        throw new Error(
          `PostgreSQL at ${PG_URL} is required (SWITCHBOARD_REQUIRE_PG=1) but unreachable: ${(err as Error).message}`,
        );
      process.stderr.write(
        `skipping PostgreSQL tests: ${PG_URL} unreachable (${(err as Error).message}); set SWITCHBOARD_TEST_PG_URL or start PostgreSQL\n`,
      );
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return pgReachable;
}

export interface TestStore {
  db: Db;
  dialect: Dialect;
  /** SQLite file path or PostgreSQL schema name, for a second connection (another "process"). */
  location: string;
  reopen(): Promise<Db>;
  cleanup(): Promise<void>;
}

let counter = 0;

/** A fresh, migrated store: a temp SQLite file, or a new schema on the test PostgreSQL. */
export async function freshStore(dialect: Dialect): Promise<TestStore> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sb-test-'));
    const path = join(dir, 'test.db');
    const open = async () => {
      const d = new SqliteDb({ path, synchronous: 'normal' });
      await migrate(d, appMigrations());
      return d;
    };
    const db = await open();
    return {
      db,
      dialect,
      location: path,
      reopen: open,
      async cleanup() {
        await db.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const open = async () => {
    const d = await new PostgresDb({ url: PG_URL, schema, max: 5 }).open();
    await migrate(d, appMigrations());
    return d;
  };
  const db = await open();
  return {
    db,
    dialect,
    location: schema,
    reopen: open,
    async cleanup() {
      await db.close().catch(() => {});
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

/** The dialects to run a suite against: SQLite always, PostgreSQL when reachable (or required). */
export async function dialects(): Promise<Dialect[]> {
  return (await pgAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
}

/**
 * The plan the database chooses for `sql`, as text: SQLite's EXPLAIN QUERY PLAN details, or
 * PostgreSQL's EXPLAIN with sequential scans discouraged (a tiny test table would otherwise be
 * scanned whatever its indexes). Run in a transaction, so a DELETE is planned on the write connection;
 * EXPLAIN changes nothing. For the tests that prove each query has its index.
 */
export async function explainPlan(db: Db, sql: Sql): Promise<string> {
  if (db.dialect === 'sqlite') {
    const rows = await db.tx((tx) =>
      tx.query<{ detail: string }>({ ...sql, text: `EXPLAIN QUERY PLAN ${sql.text}` }),
    );
    return rows.map((r) => r.detail).join('\n');
  }
  return db.tx(async (tx) => {
    await tx.query({ text: 'SET LOCAL enable_seqscan = off' });
    const rows = await tx.query<{ 'QUERY PLAN': string }>({ ...sql, text: `EXPLAIN ${sql.text}` });
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

/** The indexes on `tables`, with their definitions (SQLite's own autoindexes have none). */
export async function tableIndexes(
  db: Db,
  tables: string[],
): Promise<{ name: string; sql: string | null }[]> {
  const list = tables.map((_, i) => `$${i + 1}`).join(', ');
  return db.query<{ name: string; sql: string | null }>(
    db.dialect === 'sqlite'
      ? {
          text: `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN (${list})`,
          values: tables,
        }
      : {
          text: `SELECT indexname AS name, indexdef AS sql FROM pg_indexes WHERE tablename IN (${list}) AND schemaname = current_schema()`,
          values: tables,
        },
  );
}
