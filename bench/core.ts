import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { buildEnvelope, canonicalJson } from '../src/envelope/index.js';
import { EventLog } from '../src/log/log.js';
import { migrate } from '../src/store/migrate.js';
import { appMigrations } from '../src/server/modules.js';
import { PostgresDb } from '../src/store/postgres.js';
import { type SqliteOptions, SqliteDb } from '../src/store/sqlite.js';
import { alternate, alternateAll, fmt, line, rate, rateConcurrent } from './stats.js';

const PG_URL = process.env.SWITCHBOARD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULTS = { tenant_id: 'bench', environment: 'bench' };
const sample = () => ({
  type: 'agent.tool.requested' as const,
  correlation_id: 'bench',
  subject: { tool: 'Bash', action: 'exec', resource_ref: 'repo://x' },
  redacted_summary: { cwd: 'project', tool: 'Bash' },
});
const BODY = canonicalJson(buildEnvelope(sample(), DEFAULTS));

/** The SQLite designs compared in one run: the default first. */
export const SQLITE_DESIGNS: { label: string; opts: Pick<SqliteOptions, 'writer' | 'transport'> }[] = [
  { label: 'writer on the event loop', opts: { writer: 'inline' } },
  { label: 'writer thread', opts: { writer: 'thread', transport: 'async' } },
  { label: 'writer thread, sync', opts: { writer: 'thread', transport: 'sync' } },
];
/** As many appends in flight as the ingress bench has connections. */
const IN_FLIGHT = 32;

/** The bare baseline: one INSERT of the same bytes in one transaction, on this thread, same settings. */
function bareSqlite(path: string): { insert: () => void; close: () => void } {
  const raw = new Database(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  raw.exec('CREATE TABLE bare (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = raw.prepare('INSERT INTO bare (body) VALUES (?)');
  const tx = raw.transaction((b: string) => insert.run(b));
  return { insert: () => tx(BODY), close: () => raw.close() };
}

/**
 * Durable append (event + chain head + outbox row, one transaction) against the bare baseline, one at a
 * time and IN_FLIGHT at a time, for each SQLite design; then PostgreSQL.
 */
export async function benchAppend(): Promise<string[]> {
  const out = ['core: durable append, events/s (one transaction per event)'];
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-'));
  try {
    const bare = bareSqlite(join(dir, 'bare.db'));
    const stores = await Promise.all(
      SQLITE_DESIGNS.map(async (d, i) => {
        const db = new SqliteDb({ path: join(dir, `b${i}.db`), synchronous: 'full', ...d.opts });
        await migrate(db, appMigrations());
        return { ...d, db, log: new EventLog(db, DEFAULTS) };
      }),
    );
    const n = 1500;
    const [bareRate, ...ones] = await alternateAll(3, [
      () => rate(n, bare.insert),
      ...stores.map((s) => () => rate(n, () => s.log.append(sample()))),
    ]);
    const commits = stores.map(() => 0);
    const many = await alternateAll(
      3,
      stores.map((s, i) => async () => {
        const before = s.db.stats().commits;
        const r = await rateConcurrent(2 * n, IN_FLIGHT, () => s.log.append(sample()));
        commits[i] = (s.db.stats().commits - before) / (2 * n);
        return r;
      }),
    );
    out.push(line('SQLite (WAL, synchronous=FULL) bare INSERT', fmt(bareRate!)));
    stores.forEach((s, i) => {
      const r = ones[i]!;
      out.push(line(`SQLite append, 1 at a time, ${s.label}`, fmt(r), `ratio ${(r / bareRate!).toFixed(2)}`));
    });
    stores.forEach((s, i) => {
      const r = many[i]!;
      out.push(
        line(
          `SQLite append, ${IN_FLIGHT} in flight, ${s.label}`,
          fmt(r),
          `ratio ${(r / bareRate!).toFixed(2)} (target ≥ 0.90); ${commits[i]!.toFixed(2)} commits per append`,
        ),
      );
    });
    for (const s of stores) await s.db.close();
    bare.close();
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
        `ratio ${(ours / bare).toFixed(2)} (target ≥ 0.8, issue 13)`,
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

/** Seconds an idle process is left alone before its memory is read: past start-up's last allocations. */
const IDLE_SETTLE_MS = 2000;

/** VmRSS and its split (file-backed: the node binary and libraries; anonymous: heaps, stacks), in MB. */
function residentMb(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

/** CPU time (user + system) a process has used so far, from `/proc/<pid>/stat` (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resolves once `child` wrote `marker` on stderr (or rejects when it exits first or takes over 30 s). */
function waitFor(child: ReturnType<typeof spawn>, marker: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`no "${marker}" within 30 s: ${seen.slice(-300)}`)),
      30_000,
    );
    child.stderr?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(marker)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before "${marker}": ${seen.slice(-300)}`));
    });
  });
}

/**
 * Resident memory of an idle `switchboard serve` with the example config (`switchboard init`, SQLite),
 * two seconds after it is ready, beside a bare `node -e` process idle for as long in the same run.
 */
export async function benchIdleMemory(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-idle-'));
  const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;
  const env = { PATH: process.env.PATH, SWITCHBOARD_LOG_LEVEL: 'warn' };
  const children: ReturnType<typeof spawn>[] = [];
  try {
    const init = spawn(process.execPath, [cli, 'init'], { cwd: dir, env, stdio: 'ignore' });
    await new Promise((r) => init.once('exit', r));
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    const serve = spawn(process.execPath, [cli, 'serve', '--port', port], {
      cwd: dir,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(serve);
    const spawned = performance.now();
    await waitFor(serve, 'switchboard ready');
    const readyMs = performance.now() - spawned;
    const readyCpuMs = cpuMs(serve.pid as number);
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const ours = residentMb(serve.pid as number);
    const bare = spawn(
      process.execPath,
      ['-e', 'process.stderr.write("ready\\n"); setInterval(() => {}, 1000)'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(bare);
    await waitFor(bare, 'ready');
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const base = residentMb(bare.pid as number);
    const split = (m: { anon: number; file: number }) => `anon ${fmt(m.anon, 1)} + file ${fmt(m.file, 1)} MB`;
    return [
      `core: idle server memory (load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
      line(
        'idle `serve` RSS, example config (SQLite)',
        `${fmt(ours.rss, 1)} MB`,
        `${split(ours)}; goal < 80 MB (issue 13)`,
      ),
      line('bare idle `node -e` RSS (baseline)', `${fmt(base.rss, 1)} MB`, split(base)),
      line(
        '`serve` ready after (spawn to the ready line)',
        `${fmt(readyMs, 0)} ms`,
        `CPU ${fmt(readyCpuMs, 0)} ms to get there (the wall clock depends on load)`,
      ),
      line(
        'gateway above bare node',
        `${fmt(ours.rss - base.rss, 1)} MB`,
        `ratio ${(ours.rss / base.rss).toFixed(2)}`,
      ),
    ];
  } finally {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
