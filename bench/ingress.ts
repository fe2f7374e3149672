import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { parseConfig } from '../src/server/config.js';
import { ingressModule } from '../src/ingress/module.js';
import { coreModule } from '../src/server/core-routes.js';
import { appMigrations } from '../src/server/modules.js';
import { startServer } from '../src/server/serve.js';
import { migrate } from '../src/store/migrate.js';
import type { DbStats } from '../src/store/port.js';
import { type SqliteOptions, SqliteDb } from '../src/store/sqlite.js';
import { SQLITE_DESIGNS } from './core.js';
import { flood, signedPush } from './flood.js';
import { costs, fmt, line, type LoadResult } from './stats.js';

const SECRET = 'bench-webhook-secret';
/** Enough connections to keep both cores busy; more only queue in the kernel. */
const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_INGRESS_SECONDS ?? 10);
/** How long the bench waits for admission to catch up after a run before it counts. */
const DRAIN_MS = 60_000;

type Push = Awaited<ReturnType<typeof signedPush>>;

function load(dir: string, url: string, push: Push, prefix: string): Promise<LoadResult> {
  return flood(dir, push, { url, connections: CONNECTIONS, durationS: DURATION_S, prefix });
}

/** The baseline: node:http, read the body, one durable INSERT (same SQLite settings), 202. */
function bareServer(
  path: string,
  synchronous: Sync,
): Promise<{ server: Server; url: string; close: () => void }> {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  db.exec('CREATE TABLE bare (id INTEGER PRIMARY KEY, delivery TEXT NOT NULL, body BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO bare (delivery, body) VALUES (?, ?)');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      insert.run(String(req.headers['x-github-delivery']), Buffer.concat(chunks));
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"accepted"}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        close: () => {
          server.close();
          db.close();
        },
      }),
    ),
  );
}

type Sync = 'full' | 'normal';

/** CPU time of the event-loop thread alone (Linux), in µs; the rest of the process is the writer and libuv. */
function mainThreadCpuUs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * Verified, durable GitHub webhooks accepted per second and p99 to the 2xx, beside a bare INSERT server,
 * at both SQLite durability levels: `full` (every commit survives power loss, the default) and `normal`
 * (survives a killed process, which is what the crash guarantee needs).
 */
export async function benchIngress(): Promise<string[]> {
  const push = await signedPush(SECRET);
  const out = [
    `ingress: verified, durable GitHub webhooks (${push.body.length} B push payload, ${CONNECTIONS} connections, ${DURATION_S} s per run, autocannon in a second process; admission runs alongside)`,
  ];
  // BENCH_INGRESS_SYNC=full runs one durability level only.
  const levels = (process.env.BENCH_INGRESS_SYNC ?? 'full,normal').split(',') as Sync[];
  for (const sync of levels) out.push(...(await benchOne(sync, push)));
  return out;
}

async function benchOne(sync: Sync, push: Push): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-ingress-bench-'));
  const bare = await bareServer(join(dir, 'bare.db'), sync);
  const S = sync.toUpperCase();
  try {
    const run = Date.now().toString(36);
    // Baseline first, then each design, then the baseline again: drift on a loaded machine shows as a spread.
    const bare1 = await load(dir, bare.url, push, `bare-${run}-1`);
    const ours: { label: string; r: LoadResult; lines: string[] }[] = [];
    for (const [i, d] of SQLITE_DESIGNS.entries()) {
      ours.push({
        label: d.label,
        ...(await benchDesign(join(dir, `d${i}`), d.opts, sync, push, run)),
      });
    }
    const bare2 = await load(dir, bare.url, push, `bare-${run}-2`);
    const bareRps = Math.max(bare1.rps, bare2.rps);
    const out = [
      line(
        `bare node:http + one SQLite INSERT (${S})`,
        `${fmt(bareRps)}/s`,
        `p99 ${bare1.p99} / ${bare2.p99} ms`,
      ),
    ];
    for (const o of ours) {
      out.push(
        line(
          `POST /v1/ingress/github (${S}), ${o.label}`,
          `${fmt(o.r.rps)}/s`,
          `p99 ${o.r.p99} ms, p50 ${o.r.p50} ms; ratio ${(o.r.rps / bareRps).toFixed(2)} (target ≥ 5,000/s and ≥ 0.70)`,
        ),
        ...o.lines,
      );
    }
    return out;
  } finally {
    bare.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One gateway on its own data dir and store, loaded like the baseline; its figures and its counts. */
async function benchDesign(
  dir: string,
  opts: Pick<SqliteOptions, 'writer' | 'transport'>,
  sync: Sync,
  push: Push,
  run: string,
): Promise<{ r: LoadResult; lines: string[] }> {
  const config = parseConfig({
    data_dir: join(dir, 'data'),
    server: { host: '127.0.0.1', port: 0 },
    store: { sqlite_synchronous: sync },
    log: { level: 'silent' },
    sources: { github: { type: 'github', secret: SECRET } },
  });
  const db = new SqliteDb({ path: join(dir, 'data', 'switchboard.db'), synchronous: sync, ...opts });
  await migrate(db, appMigrations());
  const server = await startServer(config, {
    db,
    modules: [coreModule(), ingressModule()],
    logger: pino({ level: 'silent' }),
    env: { SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64') },
    defaultMetrics: false,
  });
  // Diagnosis: BENCH_INGRESS_RELAY=off measures the route alone, with admission not running.
  if (process.env.BENCH_INGRESS_RELAY === 'off') await server.services.relay.stop();
  try {
    const before = db.stats();
    const relay0 = costs(server.services).claims;
    const cpu = process.cpuUsage();
    const mainCpu = mainThreadCpuUs();
    const r = await load(dir, `${server.url}/v1/ingress/github`, push, `sb-${run}-${opts.writer}`);
    const during = db.stats();
    const used = process.cpuUsage(cpu);
    const usedMain = mainThreadCpuUs() - mainCpu;
    const count = async (text: string) => Number((await db.query<{ n: number }>({ text }))[0]?.n ?? 0);
    const stored = await count('SELECT COUNT(*) AS n FROM ingress_deliveries');
    // Admission falls behind a flood; what a webhook costs in all is known once it has caught up.
    const backlog = await count('SELECT COUNT(*) AS n FROM outbox');
    const drainStart = performance.now();
    let left = backlog;
    while (
      left > 0 &&
      process.env.BENCH_INGRESS_RELAY !== 'off' &&
      performance.now() - drainStart < DRAIN_MS
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      left = await count('SELECT COUNT(*) AS n FROM outbox');
    }
    const drainS = (performance.now() - drainStart) / 1000;
    const after = db.stats();
    const claims = (costs(server.services).claims - relay0) / Math.max(1, r.ok);
    const per = (to: DbStats, k: keyof DbStats) => ((to[k] - before[k]) / Math.max(1, r.ok)).toFixed(2);
    return {
      r,
      lines: [
        line(
          '  2xx / non-2xx / errors',
          `${r.ok} / ${r.non2xx} / ${r.errors}`,
          `deliveries stored: ${stored}; CPU per webhook ${fmt((used.user + used.system) / Math.max(1, r.ok))} µs, ${fmt(usedMain / Math.max(1, r.ok))} on the event loop`,
        ),
        line(
          '  commits per accepted webhook',
          per(after, 'commits'),
          `goal ≤ 1.0; ${per(after, 'transactions')} transactions, ${per(after, 'statements')} statements, ${claims.toFixed(2)} relay claims (accept + admission)`,
        ),
        line(
          '  during the load / admission backlog',
          `${per(during, 'commits')} commits`,
          `outbox ${backlog} rows at the end, ${left} after ${fmt(drainS, 1)} s of draining`,
        ),
      ],
    };
  } finally {
    await server.stop();
  }
}
