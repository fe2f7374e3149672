import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildEnvelope, canonicalJson } from '../src/envelope/index.js';
import { EventLog } from '../src/log/log.js';
import { migrate } from '../src/store/migrate.js';
import { appMigrations } from '../src/server/modules.js';
import { PostgresDb } from '../src/store/postgres.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { alternate, fmt, line, rate } from './stats.js';

const PG_URL = process.env.SWITCHBOARD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULTS = { tenant_id: 'bench', environment: 'bench' };
const sample = () => ({
  type: 'agent.tool.requested' as const,
  correlation_id: 'bench',
  subject: { tool: 'Bash', action: 'exec', resource_ref: 'repo://x' },
  redacted_summary: { cwd: 'project', tool: 'Bash' },
});
const BODY = canonicalJson(buildEnvelope(sample(), DEFAULTS));

/**
 * Durable append (event + chain head + outbox row, one transaction) against the bare baseline: one
 * INSERT of the same bytes in one transaction per event, through the raw driver, same durability.
 */
export async function benchAppend(): Promise<string[]> {
  const out = ['core: durable append, events/s (one transaction per event)'];
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  try {
    const db = new SqliteDb({ path: join(dir, 'b.db'), synchronous: 'full' });
    await migrate(db, appMigrations());
    db.driver.exec('CREATE TABLE bare (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const insert = db.driver.prepare('INSERT INTO bare (body) VALUES (?)');
    const bareTx = db.driver.transaction((b: string) => insert.run(b));
    const log = new EventLog(db, DEFAULTS);
    const n = 1500;
    const [bare, ours] = await alternate(
      3,
      () => rate(n, () => bareTx(BODY)),
      () => rate(n, () => log.append(sample())),
    );
    out.push(line('SQLite (WAL, synchronous=FULL) bare INSERT', fmt(bare)));
    out.push(
      line('SQLite append event + outbox', fmt(ours), `ratio ${(ours / bare).toFixed(2)} (target ≥ 0.70)`),
    );
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const schema = `bench_${Date.now().toString(36)}`;
  let pgdb: PostgresDb | undefined;
  try {
    pgdb = await new PostgresDb({ url: PG_URL, schema, max: 2 }).open();
    await migrate(pgdb, appMigrations());
    await pgdb.query({ text: 'CREATE TABLE bare (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)' });
    const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await client.connect();
    const log = new EventLog(pgdb, DEFAULTS);
    const n = 1500;
    const [bare, ours] = await alternate(
      3,
      () =>
        rate(n, async () => {
          await client.query('BEGIN');
          await client.query('INSERT INTO bare (body) VALUES ($1)', [BODY]);
          await client.query('COMMIT');
        }),
      () => rate(n, () => log.append(sample())),
    );
    await client.end();
    out.push(line('PostgreSQL bare INSERT', fmt(bare)));
    out.push(
      line(
        'PostgreSQL append event + outbox',
        fmt(ours),
        `ratio ${(ours / bare).toFixed(2)} (target ≥ 0.70)`,
      ),
    );
  } catch (err) {
    out.push(line('PostgreSQL', 'skipped', `unreachable: ${(err as Error).message}`));
  } finally {
    if (pgdb) {
      await pgdb.query({ text: `DROP SCHEMA "${schema}" CASCADE` }).catch(() => {});
      await pgdb.close();
    }
  }
  return out;
}

/** Resident memory of an idle `switchboard serve` on SQLite, two seconds after it listens. */
export async function benchIdleMemory(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-idle-'));
  const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0'], {
    cwd: dir,
    env: { PATH: process.env.PATH, SWITCHBOARD_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  try {
    await new Promise((r) => setTimeout(r, 3000));
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    return [
      'core: idle server memory',
      line('RSS of idle `switchboard serve` (SQLite)', `${fmt(kb / 1024, 1)} MB`, 'target < 120 MB'),
    ];
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
