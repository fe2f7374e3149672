import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { parseConfig } from '../src/server/config.js';
import { deliveryModule } from '../src/delivery/module.js';
import { mcpModule } from '../src/mcp/module.js';
import { notifyModule } from '../src/notify/module.js';
import { coreModule } from '../src/server/core-routes.js';
import { startServer } from '../src/server/serve.js';
import { migrate } from '../src/store/migrate.js';
import { appMigrations } from '../src/server/modules.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { costLine, costs, fmt, line, summarize } from './stats.js';
import { deliveryPort } from '../src/delivery/port.js';

/** Enough sequential calls that p99 rests on 20 samples, few enough to finish in seconds. */
const CALLS = 2_000;
const WARMUP = 200;
/** Concurrent MCP clients for the throughput figure (an agent fleet on one gateway). */
const CLIENTS = 8;
const THROUGHPUT_MS = 3_000;
const KEY = 'bench-agent-key-0123456789abcdef';

interface Receiver {
  server: Server;
  url: string;
  /** Arrival time (performance.now) per call number found in the body. */
  arrivals: Map<number, number>;
  /** Messages received so far. */
  count(): number;
}

/** Waits (at most 20 s) until the receiver has `total` messages; no engine, nothing to wait for. */
async function drained(receiver: Receiver, total: number, engine: boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (engine && receiver.count() < total && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 5));
}

/** A local ntfy: answers a publish the way ntfy does, and notes when each call's message arrived. */
async function ntfyReceiver(): Promise<Receiver> {
  const arrivals = new Map<number, number>();
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const m = /bench call (\d+)/.exec(Buffer.concat(chunks).toString('utf8'));
      if (m) arrivals.set(Number(m[1]), at);
      n += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `m${n}`,
          time: Math.floor(Date.now() / 1000),
          event: 'message',
          topic: 'bench',
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    count: () => n,
  };
}

/**
 * The SDK's Streamable HTTP client hands every `fetch` of a transport the same AbortSignal (its
 * `close()` aborts them all), and Node's fetch adds an abort listener to that signal per request that
 * goes only when the request is garbage-collected: one client making thousands of calls passes the
 * 1,500 listeners undici allows and Node warns once per call after that (~2,800 warnings per run).
 * Each request gets its own signal that follows the transport's (`AbortSignal.any` links them without a
 * listener on the shared one), so `close()` still aborts every request and nothing accumulates.
 */
const fetchOwnSignal: typeof fetch = (input, init) =>
  fetch(input, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);

async function client(url: string): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', url), {
      fetch: fetchOwnSignal,
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  return c;
}

/** Calls per tool for the CPU figure: a fixed count, so the CPU per call does not depend on the rate. */
const CPU_CALLS = 2_000;

/**
 * This process's CPU time (gateway, delivery engine, ntfy receiver and the MCP clients: the bench runs
 * them all in one process) per call, over `CPU_CALLS` calls on the clients; `settled` waits for what the
 * calls left to do (the deliveries), so that work is counted too.
 */
async function cpuPerCall(
  clients: Client[],
  call: (c: Client, i: number) => Promise<unknown>,
  settled: () => Promise<void> = async () => {},
): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    clients.map(async (c) => {
      while (next < CPU_CALLS) await call(c, next++);
    }),
  );
  await settled();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / CPU_CALLS;
}

async function throughput(
  clients: Client[],
  call: (c: Client, i: number) => Promise<unknown>,
): Promise<number> {
  let done = 0;
  let next = 0;
  const end = performance.now() + THROUGHPUT_MS;
  const start = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < end) {
        await call(c, next++);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/**
 * `report_progress` over Streamable HTTP (auth, schema, content gate, governance, routing, an event
 * and a queued delivery in one transaction) beside a bare SDK `echo` tool on the same server, and the
 * time from the call to the local ntfy receiver's request through the real delivery engine.
 */
export async function benchNotify(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-notify-'));
  const receiver = await ntfyReceiver();
  const db = new SqliteDb({ path: join(dir, 'b.db'), synchronous: 'normal' });
  await migrate(db, appMigrations());
  const config = parseConfig({
    data_dir: dir,
    server: { port: 0 },
    auth: { keys: [{ name: 'bench', role: 'agent', key: KEY }] },
    channels: { phone: { type: 'ntfy', url: receiver.url, topic: 'bench' } },
    routes: [{ match: 'true', channels: ['phone'] }],
    // The bench measures the path, not the policy: no merging, no rate limit.
    notify: { progress_merge_window_seconds: 0, rate_per_minute: 0 },
    egress: { allow: ['127.0.0.1'] },
  });
  const server = await startServer(config, {
    db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    modules: [coreModule(), deliveryModule({ env: {} }), notifyModule(), mcpModule({ echoTool: true })],
  });
  const engine = server.kernel.get(deliveryPort) !== undefined;
  try {
    const c = await client(server.url);
    let seq = 0;
    const report = (cl: Client, i: number) =>
      cl.callTool({ name: 'report_progress', arguments: { stage: 'progress', summary: `bench call ${i}` } });
    const echo = (cl: Client) => cl.callTool({ name: 'echo', arguments: { text: 'hi' } });
    for (let i = 0; i < WARMUP; i++) {
      await report(c, 1_000_000 + seq++);
      await echo(c);
    }
    const callMs: number[] = [];
    const echoMs: number[] = [];
    const sentAt = new Map<number, number>();
    for (let i = 0; i < CALLS; i++) {
      const t0 = performance.now();
      sentAt.set(i, t0);
      await report(c, i);
      callMs.push(performance.now() - t0);
      const t1 = performance.now();
      await echo(c);
      echoMs.push(performance.now() - t1);
    }
    const deadline = Date.now() + 10_000;
    while (engine && receiver.arrivals.size < CALLS + WARMUP && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const toReceiver = [...sentAt].flatMap(([i, t]) => {
      const at = receiver.arrivals.get(i);
      return at === undefined ? [] : [at - t];
    });

    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => client(server.url)));
    const echoRate = await throughput(clients, (cl) => echo(cl));
    const c0 = costs(server.services);
    const arrivedBefore = receiver.count();
    const reportRate = await throughput(clients, (cl, i) => report(cl, 2_000_000 + i));
    const c1 = costs(server.services);
    const reportsInWindow = Math.round((reportRate * THROUGHPUT_MS) / 1000);
    const arrivedInWindow = receiver.count() - arrivedBefore;
    // The deliveries the window left behind are sent before the CPU figure starts.
    await drained(receiver, arrivedBefore + reportsInWindow, engine);
    const echoCpu = await cpuPerCall(clients, (cl) => echo(cl));
    const from = receiver.count();
    const reportCpu = await cpuPerCall(
      clients,
      (cl, i) => report(cl, 3_000_000 + i),
      () => drained(receiver, from + CPU_CALLS, engine),
    );
    await Promise.all([c, ...clients].map((cl) => cl.close()));

    const call = summarize(callMs);
    const bare = summarize(echoMs);
    const lines = [
      `notify — report_progress over MCP Streamable HTTP (SQLite, synchronous=normal; load average ${fmt(loadavg()[0] ?? 0, 1)})`,
      line('report_progress calls/s', fmt(reportRate), `${CLIENTS} clients, ${THROUGHPUT_MS / 1000} s`),
      costLine('  per report', c0, c1, reportsInWindow),
      line(
        '  deliveries at the receiver within the window',
        `${fmt(arrivedInWindow)} of ${fmt(reportsInWindow)}`,
        'the engine sends in the same process while the window runs; the rest is sent after it',
      ),
      line(
        'bare SDK echo tool calls/s (same server)',
        fmt(echoRate),
        `ratio ${fmt(reportRate / echoRate, 2)} (target ≥ 0.8, issue 13)`,
      ),
      line(
        'process CPU ms per call: report / echo',
        `${fmt(reportCpu, 3)} / ${fmt(echoCpu, 3)}`,
        `ratio ${fmt(echoCpu / reportCpu, 2)}; ${fmt(CPU_CALLS)} calls each on ${CLIENTS} clients, the report's delivery included; gateway, receiver and clients share the process`,
      ),
      line(
        'report_progress call p50 / p99 ms',
        `${fmt(call.p50, 2)} / ${fmt(call.p99, 2)}`,
        `${CALLS} sequential calls`,
      ),
      line('echo call p50 / p99 ms', `${fmt(bare.p50, 2)} / ${fmt(bare.p99, 2)}`),
    ];
    if (engine && toReceiver.length > 0) {
      const r = summarize(toReceiver);
      lines.push(
        line(
          'call → ntfy receiver p50 / p99 ms',
          `${fmt(r.p50, 2)} / ${fmt(r.p99, 2)}`,
          `${toReceiver.length} of ${CALLS} arrived (target p99 < 20)`,
        ),
      );
    } else {
      lines.push(line('call → receiver', 'n/a', 'no delivery engine ran: call latency only'));
    }
    return lines;
  } finally {
    await server.stop();
    await new Promise((r) => receiver.server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
}
