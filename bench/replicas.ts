import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freshStore, PG_URL, pgAvailable } from '../src/store/testing.js';
import { flood, signedPush } from './flood.js';
import { fmt, line } from './stats.js';

/**
 * Issue 19 point 1 figures: verified, durable GitHub webhooks per second with 1, 2 and 3 real
 * `switchboard serve` processes on one PostgreSQL schema, load spread evenly (one autocannon per
 * replica, in processes of their own), beside a bare node:http server doing one PostgreSQL INSERT per
 * request in the same run. Admission runs alongside on every replica, as in production.
 */
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const SECRET = 'bench-replicas-secret';
const CONNECTIONS = 24;
const DURATION_S = Number(process.env.BENCH_REPLICAS_SECONDS ?? 8);
const CLK_TCK = 100;

const CONFIG = `data_dir: ./data
server: { host: 127.0.0.1, port: 0 }
auth:
  keys:
    - { name: ops, role: admin, key_env: SB_ADMIN_KEY }
sources:
  github: { type: github, secret_env: GH_SECRET }
triggers:
  - { id: every-push, source: github, when: 'event.name == "push"', action: { type: notify } }
log: { level: info }
`;

interface Proc {
  child: ChildProcess;
  url: string;
}

function serve(cwd: string, env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`replica did not start: ${out}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve({ child, url: m[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited ${code}: ${out}`));
    });
  });
}

/** utime + stime of a process, in CPU seconds (Linux /proc). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

async function bareServer(
  schema: string,
): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 10, options: `-c search_path=${schema}` });
  await pool.query(
    'CREATE TABLE bare (id BIGSERIAL PRIMARY KEY, delivery TEXT NOT NULL, body BYTEA NOT NULL)',
  );
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pool
        .query('INSERT INTO bare (delivery, body) VALUES ($1, $2)', [
          String(req.headers['x-github-delivery']),
          Buffer.concat(chunks),
        ])
        .then(
          () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"accepted"}'),
          () => res.writeHead(500).end(),
        );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: async () => {
      server.close();
      await pool.end();
    },
  };
}

export async function benchReplicas(): Promise<string[]> {
  if (!(await pgAvailable())) return ['replicas: skipped (PostgreSQL unreachable)'];
  const push = await signedPush(SECRET);
  const dir = mkdtempSync(join(tmpdir(), 'sb-replicas-bench-'));
  const out = [
    `replicas: verified, durable GitHub webhooks on PostgreSQL, load spread over N \`serve\` processes (${CONNECTIONS} connections in all, ${DURATION_S} s per run; admission alongside)`,
  ];
  try {
    const bareStore = await freshStore('postgres');
    await bareStore.db.close();
    const bare = await bareServer(bareStore.location);
    const bare1 = await flood(dir, push, {
      url: bare.url,
      connections: CONNECTIONS,
      durationS: DURATION_S,
      prefix: 'bare1',
    });
    const runs: { n: number; rps: number; p99: number; cpuPerK: number }[] = [];
    for (const n of [1, 2, 3]) runs.push(await benchN(n, dir, push));
    const bare2 = await flood(dir, push, {
      url: bare.url,
      connections: CONNECTIONS,
      durationS: DURATION_S,
      prefix: 'bare2',
    });
    await bare.close();
    await bareStore.cleanup();
    const bareRps = Math.max(bare1.rps, bare2.rps);
    out.push(
      line(
        'bare node:http + one PostgreSQL INSERT',
        `${fmt(bareRps)}/s`,
        `p99 ${bare1.p99} / ${bare2.p99} ms (before / after)`,
      ),
    );
    const one = runs[0]!.rps;
    for (const r of runs) {
      out.push(
        line(
          `POST /v1/ingress/github, ${r.n} replica${r.n > 1 ? 's' : ''}`,
          `${fmt(r.rps)}/s`,
          `p99 ${r.p99} ms; scaling ×${(r.rps / one).toFixed(2)} (per replica ${(r.rps / one / r.n).toFixed(2)}); ${fmt(r.cpuPerK, 2)} gateway CPU-s per 1,000; ratio to bare ${(r.rps / bareRps).toFixed(2)}`,
        ),
      );
    }
    const three = runs[2]!;
    const perCore = 1000 / three.cpuPerK;
    out.push(
      line(
        'projection, 3 replicas, per gateway core',
        `${fmt(perCore)}/s`,
        `= 1,000 / gateway CPU-s per 1,000 at N=3; k cores ≈ k × this, until PostgreSQL's commit rate binds (its bare INSERT rate above, on this machine's shared cores, is the floor of that bound)`,
      ),
    );
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchN(
  n: number,
  dir: string,
  push: Awaited<ReturnType<typeof signedPush>>,
): Promise<{ n: number; rps: number; p99: number; cpuPerK: number }> {
  const store = await freshStore('postgres');
  await store.db.close();
  const env = {
    GH_SECRET: SECRET,
    SB_ADMIN_KEY: 'bench-replicas-admin-key',
    SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64'),
    SWITCHBOARD_DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${store.location}`)}`,
  };
  const procs: Proc[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const home = mkdtempSync(join(dir, `n${n}-r${i}-`));
      writeFileSync(join(home, 'switchboard.yaml'), CONFIG);
      procs.push(await serve(home, env));
    }
    const cpu0 = procs.map((p) => cpuSeconds(p.child.pid!));
    const per = Math.max(1, Math.round(CONNECTIONS / n));
    const results = await Promise.all(
      procs.map((p, i) =>
        flood(dir, push, {
          url: `${p.url}/v1/ingress/github`,
          connections: per,
          durationS: DURATION_S,
          prefix: `n${n}-${i}-${Date.now().toString(36)}`,
        }),
      ),
    );
    const cpu = procs.reduce((s, p, i) => s + cpuSeconds(p.child.pid!) - cpu0[i]!, 0);
    const ok = results.reduce((s, r) => s + (r.ok ?? 0), 0);
    const rps = results.reduce((s, r) => s + r.rps, 0);
    return { n, rps, p99: Math.max(...results.map((r) => r.p99)), cpuPerK: (cpu / Math.max(1, ok)) * 1000 };
  } finally {
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(
      procs.map((p) => new Promise((r) => (p.child.exitCode !== null ? r(null) : p.child.once('exit', r)))),
    );
    await store.cleanup();
  }
}
