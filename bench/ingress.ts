import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
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
import { costs, fmt, line, type LoadResult, runLoader } from './stats.js';

const require = createRequire(import.meta.url);
const SECRET = 'bench-webhook-secret';
/** Enough connections to keep both cores busy; more only queue in the kernel. */
const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_INGRESS_SECONDS ?? 10);
/** How long the bench waits for admission to catch up after a run before it counts. */
const DRAIN_MS = 60_000;

/**
 * The load generator runs in a second process (autocannon's programmatic API), so it never competes
 * with the server for the event loop. Every request carries the same signed body and a fresh
 * `X-GitHub-Delivery`, so each one is new work for the dedup record.
 */
const LOADER = `
const autocannon = require(process.env.AUTOCANNON);
const [url, body, headersJson, connections, duration, prefix] = process.argv.slice(2);
let n = 0;
autocannon({
  url, connections: Number(connections), duration: Number(duration),
  requests: [{ method: 'POST', body, headers: JSON.parse(headersJson),
    setupRequest: (req) => { req.headers = { ...req.headers, 'x-github-delivery': prefix + '-' + (n++) }; return req; } }],
}, (err, r) => {
  if (err) { console.error(err); process.exit(1); }
  process.stdout.write(JSON.stringify({ ok: r['2xx'], non2xx: r.non2xx, errors: r.errors, rps: r['2xx'] / (r.duration || Number(duration)), p50: r.latency.p50, p99: r.latency.p99 }));
});`;

async function load(
  dir: string,
  url: string,
  body: string,
  headers: Record<string, string>,
  prefix: string,
): Promise<LoadResult> {
  const args = [url, body, JSON.stringify(headers), String(CONNECTIONS), String(DURATION_S), prefix];
  return runLoader<LoadResult>(dir, LOADER, args);
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

function examplePush(): string {
  const examples = require('@octokit/webhooks-examples') as Array<{ name: string; examples: unknown[] }>;
  return JSON.stringify(examples.find((e) => e.name === 'push')?.examples[0]);
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
  const body = examplePush();
  const headers = {
    'content-type': 'application/json',
    'x-github-event': 'push',
    'x-hub-signature-256': await sign(SECRET, body),
  };
  const out = [
    `ingress: verified, durable GitHub webhooks (${body.length} B push payload, ${CONNECTIONS} connections, ${DURATION_S} s per run, autocannon in a second process; admission runs alongside)`,
  ];
  // BENCH_INGRESS_SYNC=full runs one durability level only.
  const levels = (process.env.BENCH_INGRESS_SYNC ?? 'full,normal').split(',') as Sync[];
  for (const sync of levels) out.push(...(await benchOne(sync, body, headers)));
  return out;
}

async function benchOne(sync: Sync, body: string, headers: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-ingress-bench-'));
  const bare = await bareServer(join(dir, 'bare.db'), sync);
  const S = sync.toUpperCase();
  try {
    const run = Date.now().toString(36);
    // Baseline first, then each design, then the baseline again: drift on a loaded machine shows as a spread.
    const bare1 = await load(dir, bare.url, body, headers, `bare-${run}-1`);
    const ours: { label: string; r: LoadResult; lines: string[] }[] = [];
    for (const [i, d] of SQLITE_DESIGNS.entries()) {
      ours.push({
        label: d.label,
        ...(await benchDesign(join(dir, `d${i}`), d.opts, sync, body, headers, run)),
      });
    }
    const bare2 = await load(dir, bare.url, body, headers, `bare-${run}-2`);
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
  body: string,
  headers: Record<string, string>,
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
    const r = await load(dir, `${server.url}/v1/ingress/github`, body, headers, `sb-${run}-${opts.writer}`);
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
