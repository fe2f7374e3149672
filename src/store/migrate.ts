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
 * Numbered migration files per dialect, `NNNN_name.sql`. Each module owns a range so parallel work never
 * collides: core 0001–0099, gate 0100s, delivery 0200s, ingress 0300s, notify/channels 0400s, tasks
 * 0500s, runtimes 0600s. Both dialects must hold the same versions (migrate.test.ts checks it).
 */
export function loadMigrations(dialect: Dialect): Migration[] {
  const dir = fileURLToPath(new URL(`./migrations/${dialect}/`, import.meta.url));
  return readdirSync(dir)
    .map((file) => ({ file, m: MIGRATION_FILE.exec(file) }))
    .filter((x): x is { file: string; m: RegExpExecArray } => x.m !== null)
    .map(({ file, m }) => ({ version: Number(m[1]), name: m[2]!, sql: readFileSync(dir + file, 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Applies every migration not yet applied, each in its own transaction; returns the versions applied. */
export async function migrate(db: Db): Promise<number[]> {
  await db.query({
    text: `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
  });
  const applied: number[] = [];
  for (const m of loadMigrations(db.dialect)) {
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
