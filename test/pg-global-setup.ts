import pg from 'pg';
import { PG_URL } from '../src/store/testing.js';

/**
 * Keeps the test PostgreSQL from bloating across runs. Every suite creates and drops schemas; a run
 * that is killed leaves its schemas behind, and a server running with autovacuum off (as the test
 * machine's does) keeps every dropped catalog row as a dead tuple, so catalog lookups (migrations,
 * planning, EXPLAIN) slow down run after run until PostgreSQL tests hit their timeouts. Before the
 * tests: drop the schemas of test processes that are gone, and vacuum the catalog. An unreachable
 * server is left to the suites (they skip, or fail when PostgreSQL is required).
 */
export default async function setup(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch {
    return;
  }
  try {
    const { rows } = await client.query<{ nspname: string }>(
      `SELECT nspname FROM pg_namespace WHERE nspname ~ '^(t|reach)_[0-9]+_'`,
    );
    for (const { nspname } of rows) {
      const pid = Number(/^[a-z]+_(\d+)_/.exec(nspname)?.[1]);
      if (alive(pid)) continue;
      await client.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
    }
    const { rows: tables } = await client.query<{ relname: string }>(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'pg_catalog' AND c.relkind = 'r' AND NOT c.relisshared`,
    );
    // Not FULL: a plain VACUUM takes no lock that blocks another run's tests, and keeps the dead
    // tuples from piling up, which is what made the catalog slow.
    await client.query(`VACUUM ANALYZE ${tables.map((t) => `pg_catalog."${t.relname}"`).join(', ')}`);
  } catch (err) {
    process.stderr.write(`test PostgreSQL upkeep skipped: ${(err as Error).message}\n`);
  } finally {
    await client.end().catch(() => {});
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
