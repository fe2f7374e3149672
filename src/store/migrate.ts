import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db, Dialect } from './port.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * Where one owner keeps its migrations: a folder holding `sqlite/` and `postgres/`, each with numbered
 * files `NNNN_name.sql`. Every module that has tables names its folder in its manifest
 * (`migrations: new URL('./migrations/', import.meta.url)`); the app root collects them.
 */
export type MigrationFolder = URL;

/**
 * The numbered migrations of every folder, in version order. Each module owns a range so parallel work
 * never collides: log 0001–0099, gate 0100s, approvals 0150s, delivery 0200s, ingress 0300s, notify
 * 0400s, signals 0450s, replies 0460s, tasks 0500s. Two files with one version is an error naming both,
 * and both dialects must hold the same versions (store.test.ts checks it).
 */
export function loadMigrations(dialect: Dialect, folders: readonly MigrationFolder[]): Migration[] {
  const seen = new Map<number, string>();
  const out: Migration[] = [];
  for (const folder of folders) {
    const dir = fileURLToPath(new URL(`./${dialect}/`, folder));
    for (const file of readdirSync(dir)) {
      const m = MIGRATION_FILE.exec(file);
      if (!m) continue;
      const version = Number(m[1]);
      const other = seen.get(version);
      if (other !== undefined)
        throw new Error(`migration ${m[1]} exists twice: ${other} and ${dir}${file}; renumber one of them`);
      seen.set(version, dir + file);
      out.push({ version, name: m[2]!, sql: readFileSync(dir + file, 'utf8') });
    }
  }
  return out.sort((a, b) => a.version - b.version);
}

/**
 * Applies every migration not yet applied, all in one transaction: a start-up applies every pending
 * migration or, when one fails (named in the error), none. On PostgreSQL the transaction holds an
 * advisory lock keyed by the schema, so replicas starting together on one schema apply each migration
 * once while stores in other schemas migrate side by side. Up to date, it costs two reads and no
 * transaction. Returns the versions applied.
 */
export async function migrate(db: Db, folders: readonly MigrationFolder[]): Promise<number[]> {
  const all = loadMigrations(db.dialect, folders);
  const before = await appliedVersions(db);
  if (before && all.every((m) => before.has(m.version))) return [];
  return db.tx(async (tx) => {
    if (tx.dialect === 'postgres')
      await tx.query({ text: 'SELECT pg_advisory_xact_lock(72616732, hashtext(current_schema()))' });
    await tx.query({
      text: `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
    });
    // Read again under the lock: another replica may have applied some meanwhile.
    const seen = (await appliedVersions(tx)) ?? new Set<number>();
    const pending = all.filter((m) => !seen.has(m.version));
    for (const m of pending) {
      try {
        await tx.query({ text: m.sql, script: true });
      } catch (err) {
        (err as Error).message =
          `migration ${String(m.version).padStart(4, '0')}_${m.name}: ${(err as Error).message}`;
        throw err;
      }
    }
    if (pending.length > 0) {
      const now = Date.now();
      await tx.query({
        text: `INSERT INTO schema_migrations (version, name, applied_at) VALUES ${pending
          .map((_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`)
          .join(', ')}`,
        values: pending.flatMap((m) => [m.version, m.name, now]),
      });
    }
    return pending.map((m) => m.version);
  });
}

/** The versions recorded in `schema_migrations`, or undefined while the table does not exist. */
async function appliedVersions(db: Db): Promise<Set<number> | undefined> {
  const exists = await db.query({
    text:
      db.dialect === 'postgres'
        ? "SELECT 1 WHERE to_regclass('schema_migrations') IS NOT NULL"
        : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
  });
  if (exists.length === 0) return undefined;
  const rows = await db.query<{ version: number | string }>({
    text: 'SELECT version FROM schema_migrations',
  });
  return new Set(rows.map((r) => Number(r.version)));
}

export async function schemaVersion(db: Db): Promise<number> {
  const rows = await db.query<{ v: number | null }>({
    text: 'SELECT MAX(version) AS v FROM schema_migrations',
  });
  return Number(rows[0]?.v ?? 0);
}
