import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
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
import { startServer } from '../src/server/serve.js';
import { fmt, line, runLoader } from './stats.js';

const require = createRequire(import.meta.url);
const SECRET = 'bench-webhook-secret';
/** Enough connections to keep both cores busy; more only queue in the kernel. */
const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_INGRESS_SECONDS ?? 10);

interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

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
  for (const sync of ['full', 'normal'] as const) out.push(...(await benchOne(sync, body, headers)));
  return out;
}

async function benchOne(sync: Sync, body: string, headers: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-ingress-bench-'));
  const config = parseConfig({
    data_dir: join(dir, 'data'),
    server: { host: '127.0.0.1', port: 0 },
    store: { sqlite_synchronous: sync },
    log: { level: 'silent' },
    sources: { github: { type: 'github', secret: SECRET } },
  });
  const bare = await bareServer(join(dir, 'bare.db'), sync);
  const server = await startServer(config, {
    modules: [coreModule(), ingressModule()],
    logger: pino({ level: 'silent' }),
    env: { SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64') },
    defaultMetrics: false,
  });
  // Diagnosis: BENCH_INGRESS_RELAY=off measures the route alone, with admission not running.
  if (process.env.BENCH_INGRESS_RELAY === 'off') await server.services.relay.stop();
  try {
    const run = Date.now().toString(36);
    // Baseline first, then ours, then the baseline again: drift on a loaded machine shows as a spread.
    const bare1 = await load(dir, bare.url, body, headers, `bare-${run}-1`);
    const ours = await load(dir, `${server.url}/v1/ingress/github`, body, headers, `sb-${run}`);
    const bare2 = await load(dir, bare.url, body, headers, `bare-${run}-2`);
    const bareRps = Math.max(bare1.rps, bare2.rps);
    const stored = await server.services.db.query<{ n: number }>({
      text: 'SELECT COUNT(*) AS n FROM ingress_deliveries',
    });
    const S = sync.toUpperCase();
    return [
      line(
        `bare node:http + one SQLite INSERT (${S})`,
        `${fmt(bareRps)}/s`,
        `p99 ${bare1.p99} / ${bare2.p99} ms`,
      ),
      line(
        `POST /v1/ingress/github (SQLite, ${S})`,
        `${fmt(ours.rps)}/s`,
        `p99 ${ours.p99} ms, p50 ${ours.p50} ms; ratio ${(ours.rps / bareRps).toFixed(2)} (target ≥ 5,000/s and ≥ 0.70)`,
      ),
      line(
        '  2xx / non-2xx / errors',
        `${ours.ok} / ${ours.non2xx} / ${ours.errors}`,
        `deliveries stored: ${Number(stored[0]?.n ?? 0)}`,
      ),
    ];
  } finally {
    await server.stop();
    bare.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
