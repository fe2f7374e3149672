import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { parseConfig } from '../src/server/config.js';
import { runtimesModule } from '../src/runtimes/module.js';
import { FakeGate, gateDecision } from '../src/runtimes/http/testing.js';
import { coreModule } from '../src/server/core-routes.js';
import { startServer } from '../src/server/serve.js';
import { costLine, costs, fmt, line, summarize } from './stats.js';
import { gatePort } from '../src/gate/port.js';
import { pacedLoad } from './paced.js';

/** bench/ is compiled to dist-bench/bench/, two levels below the repository root. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BRIDGE = join(ROOT, 'dist', 'hook.mjs');
const KEY = 'bench-agent-key-0123456789abcdef';
const PRE_TOOL_USE = readFileSync(join(ROOT, 'src/runtimes/claude-code/fixtures/PreToolUse.json'), 'utf8');

const SPAWN_RUNS = 21;
const RATE_PER_SEC = 500;
const LOAD_SECONDS = 6;
/** The first second warms the JIT and the connection pool; it is not counted. */
const WARMUP_SECONDS = 1;

/**
 * The hook's two costs: a command hook pays a whole node process per call (the bridge against bare
 * `node -e 0`, interleaved in the same run), and an HTTP hook pays one round trip through the route
 * (p99 at 500 req/s, against a bare node:http server answering `{}` at the same rate).
 */
export async function benchHooks(): Promise<string[]> {
  const out = ['hooks: bridge start-up and HTTP round trip'];
  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  try {
    const full = await gateway('full');
    try {
      const [nodeMs, bridgeMs] = await spawnTimes(full.server.url);
      out.push(line('node -e 0, median wall time', `${fmt(nodeMs, 1)} ms`));
      out.push(
        line(
          'switchboard hook claude-code (PreToolUse, allow)',
          `${fmt(bridgeMs, 1)} ms`,
          `ratio ${(bridgeMs / nodeMs).toFixed(2)} (target ≤ 1.5)`,
        ),
      );
      const barePort = (bare.address() as AddressInfo).port;
      const base = await load(`http://127.0.0.1:${barePort}/v1/runtimes/claude-code/hooks`);
      out.push(line(`bare node:http {} at ${RATE_PER_SEC}/s, p50 / p99`, pair(base)));
      const c0 = costs(full.server.services);
      out.push(roundTrip(await load(`${full.server.url}/v1/runtimes/claude-code/hooks`), 'synchronous=full'));
      out.push(costLine('  per hook (full)', c0, costs(full.server.services), RATE_PER_SEC * LOAD_SECONDS));
    } finally {
      await full.stop();
    }
    // The durable append's fsync dominates the route; NORMAL (WAL) is the documented faster setting.
    const normal = await gateway('normal');
    try {
      out.push(
        roundTrip(await load(`${normal.server.url}/v1/runtimes/claude-code/hooks`), 'synchronous=normal'),
      );
    } finally {
      await normal.stop();
    }
  } finally {
    bare.close();
  }
  return out;
}

const pair = (r: { p50: number; p99: number }) => `${fmt(r.p50, 2)} / ${fmt(r.p99, 2)} ms`;

function roundTrip(r: { p50: number; p99: number; errors: number }, store: string): string {
  return line(
    `hook route, SQLite ${store}, ${RATE_PER_SEC}/s, p50 / p99`,
    pair(r),
    `target p99 < 5 ms; ${r.errors} errors`,
  );
}

/** A real gateway (SQLite in a temp dir) with the runtimes module and a gate that allows everything. */
async function gateway(sync: 'full' | 'normal') {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-hooks-'));
  const config = parseConfig({
    data_dir: dir,
    server: { port: 0 },
    store: { sqlite_synchronous: sync },
    log: { level: 'silent' },
    auth: { keys: [{ name: 'bench', role: 'agent', key: KEY }] },
  });
  const server = await startServer(config, {
    modules: [coreModule(), runtimesModule()],
    logger: pino({ level: 'silent' }),
    env: { SWITCHBOARD_VAULT_KEY: 'a'.repeat(64) },
    defaultMetrics: false,
  });
  server.kernel.ports.set(gatePort, new FakeGate(gateDecision('allow')));
  return {
    server,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Median wall times of `node -e 0` and the bridge, run alternately so machine drift hits both. Spawned
 * asynchronously: the gateway answering the bridge lives in this process's event loop.
 */
async function spawnTimes(url: string): Promise<[number, number]> {
  const env = { ...process.env, SWITCHBOARD_URL: url, SWITCHBOARD_KEY: KEY };
  const node: number[] = [];
  const bridge: number[] = [];
  for (let i = 0; i < SPAWN_RUNS; i++) {
    node.push((await run(['-e', '0'], env, '')).ms);
    const r = await run([BRIDGE, 'claude-code'], env, PRE_TOOL_USE);
    if (r.code !== 0 || !r.stdout.includes('"allow"')) {
      throw new Error(`the bridge did not allow: ${r.code} ${r.stdout}`);
    }
    bridge.push(r.ms);
  }
  return [summarize(node).p50, summarize(bridge).p50];
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  input: string,
): Promise<{ ms: number; code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - start, code, stdout }));
    child.stdin.end(input);
  });
}

/** The paced open-loop client (bench/paced.ts): one PreToolUse every 1/RATE s, latency from its due time. */
async function load(url: string): Promise<{ p50: number; p99: number; errors: number }> {
  const r = await pacedLoad({
    url,
    method: 'POST',
    body: PRE_TOOL_USE,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    rate: RATE_PER_SEC,
    seconds: LOAD_SECONDS,
    warmSeconds: WARMUP_SECONDS,
  });
  return { p50: r.p50, p99: r.p99, errors: r.errors + r.non2xx };
}
