import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { approvalsModule } from '../src/approvals/module.js';
import { gateModule } from '../src/gate/module.js';
import { mcpModule } from '../src/mcp/module.js';
import { notifyModule } from '../src/notify/module.js';
import { processResult } from '../src/reach/context.js';
import type { InProcessTool } from '../src/reach/inprocess.js';
import { reachModule } from '../src/reach/module.js';
import { reachPort } from '../src/reach/port.js';
import { tickets, ticketsSqlite } from '../src/reach/testing.js';
import { parseConfig } from '../src/server/config.js';
import { coreModule } from '../src/server/core-routes.js';
import { appMigrations } from '../src/server/modules.js';
import { startServer } from '../src/server/serve.js';
import { migrate } from '../src/store/migrate.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { fmt, line, summarize } from './stats.js';

const CALLS = 2_000;
const WARMUP = 200;
const CLIENTS = 8;
const THROUGHPUT_MS = 3_000;
const KEY = 'bench-agent-key-0123456789abcdef';

const echo: InProcessTool = {
  name: 'bench.echo',
  schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  run: (p) => ({ text: p.text }),
};

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

/** CPU milliseconds (this process, every thread) per call of `fn`, run `n` times in sequence. */
async function cpuPerCall(n: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / n;
}

async function throughput<C>(callers: C[], call: (c: C, i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  let next = 0;
  const start = performance.now();
  const end = start + THROUGHPUT_MS;
  await Promise.all(
    callers.map(async (c) => {
      while (performance.now() < end) {
        await call(c, next++);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** Fresh MCP sessions: the SDK client keeps an abort listener per request, so a used one slows down. */
async function mcpClients(url: string, n: number): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const c = new Client({ name: 'bench', version: '1' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', url), {
          requestInit: { headers: { authorization: `Bearer ${KEY}` } },
        }),
      );
      return c;
    }),
  );
}

/** Calls per second of `tool` over MCP with `CLIENTS` fresh sessions. */
async function mcpRate(url: string, tool: string): Promise<number> {
  const clients = await mcpClients(url, CLIENTS);
  try {
    return await throughput(clients, (c, i) => c.callTool({ name: tool, arguments: { text: `hi ${i}` } }));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * Reach: what a touch costs over calling the backend directly (in process: an echo tool and a SQLite
 * query; over MCP Streamable HTTP: a registry tool beside the SDK's bare `echo` tool on the same
 * server), and the token reduction of head_tail on the seed's 400-row result.
 */
export async function benchReach(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-reach-'));
  const tdb = ticketsSqlite();
  const db = new SqliteDb({ path: join(dir, 'b.db'), synchronous: 'normal' });
  await migrate(db, appMigrations());
  const config = parseConfig({
    data_dir: dir,
    server: { port: 0 },
    auth: { keys: [{ name: 'bench', role: 'agent', key: KEY }] },
    egress: { allow: ['127.0.0.1'] },
    reach: { touch_cap_per_task: 0 },
    tools: {
      'ticket.query': {
        kind: 'sql',
        input_schema: {
          type: 'object',
          required: ['status'],
          properties: { status: { enum: ['open', 'pending', 'closed'] } },
        },
        sql: {
          database: tdb.path,
          query: 'SELECT id, title, status FROM tickets WHERE status = :status LIMIT 5',
        },
      },
    },
  });
  const reach = reachModule({ tools: [echo], env: {} });
  const server = await startServer(config, {
    db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    modules: [
      coreModule(),
      approvalsModule(),
      gateModule({ watch: false, sighup: false }),
      notifyModule(),
      mcpModule({ echoTool: true }),
      reach,
    ],
  });
  const out: string[] = ['reach (touch protocol, SQLite store synchronous=normal)'];
  try {
    const svc = server.kernel.get(reachPort)!;
    const caller = { principal: { name: 'bench', role: 'agent' as const }, task_id: null };
    const ctx = {
      signal: new AbortController().signal,
      caller: 'bench',
      task_id: null,
      owner: 'bench',
      partial: () => {},
    };

    const direct = summarize(await timed(CALLS, async (i) => echo.run({ text: `hi ${i}` }, ctx)));
    const touched = summarize(
      await timed(CALLS, (i) => svc.touch({ tool_name: 'bench.echo', params: { text: `hi ${i}` } }, caller)),
    );
    out.push(line('echo tool, called directly, p50', `${fmt(direct.p50 * 1000, 1)} µs`));
    out.push(
      line('echo tool through touch(), p50 / p99', `${fmt(touched.p50, 3)} / ${fmt(touched.p99, 3)} ms`),
    );
    out.push(
      line(
        'touch overhead in process, p50',
        `${fmt(touched.p50 - direct.p50, 3)} ms`,
        'goal < 0.3 ms (a read: the gate, 1 commit, 4 events, 1 vault seal)',
      ),
    );
    const directCpu = await cpuPerCall(CALLS, async (i) => echo.run({ text: `cpu ${i}` }, ctx));
    const stats0 = db.stats();
    const seq0 = await server.services.log.lastSeq();
    const touchCpu = await cpuPerCall(CALLS, (i) =>
      svc.touch({ tool_name: 'bench.echo', params: { text: `cpu ${i}` } }, caller),
    );
    const stats1 = db.stats();
    const events = ((await server.services.log.lastSeq()) - seq0) / CALLS;
    const perTouch = (k: 'commits' | 'statements') => (stats1[k] - stats0[k]) / CALLS;
    out.push(line('echo tool, called directly, CPU per call', `${fmt(directCpu * 1000, 1)} µs`));
    out.push(
      line(
        'touch CPU per call, in sequence',
        `${fmt(touchCpu, 3)} ms`,
        `${fmt(perTouch('commits'), 2)} commits, ${fmt(perTouch('statements'), 1)} statements, ${fmt(events, 1)} events per touch (relay acks included)`,
      ),
    );
    const concurrent = Array.from({ length: CLIENTS }, (_, i) => i);
    const sequentialRate = await throughput([0], (_, i) =>
      svc.touch({ tool_name: 'bench.echo', params: { text: `s ${i}` } }, caller),
    );
    const stats2 = db.stats();
    const concurrentRate = await throughput(concurrent, (_, i) =>
      svc.touch({ tool_name: 'bench.echo', params: { text: `c ${i}` } }, caller),
    );
    const stats3 = db.stats();
    const txPerCommit = (stats3.transactions - stats2.transactions) / (stats3.commits - stats2.commits);
    out.push(line('touch throughput in process, 1 caller', `${fmt(sequentialRate)} touches/s`));
    out.push(
      line(
        `touch throughput in process, ${CLIENTS} callers`,
        `${fmt(concurrentRate)} touches/s`,
        `group commit: ${fmt(txPerCommit, 1)} transactions per commit`,
      ),
    );

    const tool = reach.engine!.tools.get('ticket.query')!;
    const runCtx = {
      signal: new AbortController().signal,
      timeoutMs: 8000,
      maxBytes: 1 << 20,
      caller: 'bench',
      task_id: null,
      owner: 'bench',
    };
    const sqlDirect = summarize(await timed(CALLS / 2, () => tool.backend.run({ status: 'open' }, runCtx)));
    const sqlTouched = summarize(
      await timed(CALLS / 2, () =>
        svc.touch({ tool_name: 'ticket.query', params: { status: 'open' } }, caller),
      ),
    );
    out.push(line('sql tool backend directly (worker thread), p50', `${fmt(sqlDirect.p50, 3)} ms`));
    out.push(
      line(
        'sql tool through touch(), p50',
        `${fmt(sqlTouched.p50, 3)} ms`,
        `overhead ${fmt(sqlTouched.p50 - sqlDirect.p50, 3)} ms`,
      ),
    );

    // Each arm on a fresh session: a used SDK client pays for every earlier request (mcpClients).
    const onFresh = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
      const [c] = await mcpClients(server.url, 1);
      try {
        return await fn(c!);
      } finally {
        await c!.close();
      }
    };
    const call = (tool: string) => (c: Client, i: number) =>
      c.callTool({ name: tool, arguments: { text: `hi ${i}` } });
    const sdkEcho = summarize(await onFresh((c) => timed(CALLS / 2, (i) => call('echo')(c, i))));
    const mcpTouch = summarize(await onFresh((c) => timed(CALLS / 2, (i) => call('bench.echo')(c, i))));
    out.push(line('MCP: SDK echo tool, p50', `${fmt(sdkEcho.p50, 3)} ms`));
    out.push(
      line(
        'MCP: reach echo tool, p50',
        `${fmt(mcpTouch.p50, 3)} ms`,
        `overhead ${fmt(mcpTouch.p50 - sdkEcho.p50, 3)} ms`,
      ),
    );
    const echoCpu = await onFresh((c) => cpuPerCall(CALLS / 2, (i) => call('echo')(c, i)));
    const mcpTouchCpu = await onFresh((c) => cpuPerCall(CALLS / 2, (i) => call('bench.echo')(c, i)));
    // The MCP side of a registry tool alone: the same call with the touch answered from memory, so
    // what remains is the SDK, the route, the argument schema and mcpResult (what /mcp adds to a touch).
    const canned = await svc.touch({ tool_name: 'bench.echo', params: { text: 'canned' } }, caller);
    const realTouch = svc.touch;
    let stubbed = 0;
    svc.touch = async () => {
      stubbed++;
      return canned;
    };
    const stubCpu = await onFresh((c) => cpuPerCall(CALLS / 2, (i) => call('bench.echo')(c, i)));
    svc.touch = realTouch;
    out.push(
      line(
        'MCP CPU per call (client + server): SDK echo / reach',
        `${fmt(echoCpu, 3)} / ${fmt(mcpTouchCpu, 3)} ms`,
        `reach costs ${fmt(mcpTouchCpu / echoCpu, 2)}× echo's CPU (echo/reach ${fmt(echoCpu / mcpTouchCpu, 2)})`,
      ),
    );
    out.push(
      line(
        'MCP CPU per call: reach tool, touch answered from memory',
        `${fmt(stubCpu, 3)} ms`,
        `${fmt(stubCpu / echoCpu, 2)}× echo's CPU (echo/stub ${fmt(echoCpu / stubCpu, 2)}): the MCP layer of a registry tool${stubbed === CALLS / 2 ? '' : ' (stub not reached!)'}`,
      ),
    );
    // Echo before and after the reach arm, so a machine that gets busier mid-run does not flatter either.
    const echoA = await mcpRate(server.url, 'echo');
    const touchRate = await mcpRate(server.url, 'bench.echo');
    const echoB = await mcpRate(server.url, 'echo');
    const echoRate = (echoA + echoB) / 2;
    out.push(
      line(
        `MCP throughput, ${CLIENTS} clients: SDK echo`,
        `${fmt(echoRate)} calls/s`,
        `mean of ${fmt(echoA)} before and ${fmt(echoB)} after`,
      ),
    );
    out.push(
      line(
        `MCP throughput, ${CLIENTS} clients: reach echo`,
        `${fmt(touchRate)} calls/s`,
        `${fmt(touchRate / echoRate, 2)}× echo (goal ≥ 0.8×)`,
      ),
    );

    const rows = tickets();
    const p = processResult(rows, {
      mode: 'head_tail',
      keep: 5,
      max_string: 500,
      redact: ['cn_mobile', 'cn_id_card', 'bank_card', 'email'],
    });
    const fields = Object.keys(rows[0]!).every((f) => p.text.includes(`${f}: `));
    out.push(
      line(
        '400 rows, head_tail keep 5: tokens before → after',
        `${fmt(p.report.tokens_before)} → ${fmt(p.report.tokens_after)}`,
        `${fmt((1 - p.report.tokens_after / p.report.tokens_before) * 100, 1)} % fewer; every field present: ${fields} (goal ≥ 80 %)`,
      ),
    );
    const s = processResult(rows, { mode: 'summary', keep: 3, max_string: 500, redact: [] });
    out.push(
      line(
        '400 rows, summary: tokens before → after',
        `${fmt(s.report.tokens_before)} → ${fmt(s.report.tokens_after)}`,
      ),
    );
  } finally {
    await server.stop();
    tdb.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
