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

/** Applies every migration not yet applied, each in its own transaction; returns the versions applied. */
export async function migrate(db: Db, folders: readonly MigrationFolder[]): Promise<number[]> {
  await db.query({
    text: `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
  });
  const applied: number[] = [];
  for (const m of loadMigrations(db.dialect, folders)) {
    const done = await db.tx(async (tx) => {
      // Several replicas may start at once on PostgreSQL: one applies, the others wait and skip.
      if (tx.dialect === 'postgres') await tx.query({ text: 'SELECT pg_advisory_xact_lock(72616732)' });
      const seen = await tx.query({
        text: 'SELECT 1 FROM schema_migrations WHERE version = $1',
        values: [m.version],
      });
      if (seen.length > 0) return false;
      await tx.query({ text: m.sql, script: true });
      await tx.query({
        text: 'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
        values: [m.version, m.name, Date.now()],
      });
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}

export async function schemaVersion(db: Db): Promise<number> {
  const rows = await db.query<{ v: number | null }>({
    text: 'SELECT MAX(version) AS v FROM schema_migrations',
  });
  return Number(rows[0]?.v ?? 0);
}
