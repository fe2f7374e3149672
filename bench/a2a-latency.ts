import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { a2aModule } from '../src/a2a/module.js';
import { deliveryModule } from '../src/delivery/module.js';
import { parseConfig } from '../src/server/config.js';
import { coreModule } from '../src/server/core-routes.js';
import { appMigrations } from '../src/server/modules.js';
import { startServer } from '../src/server/serve.js';
import { migrate } from '../src/store/migrate.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { tasksModule } from '../src/tasks/module.js';
import { fmt, line, summarize } from './stats.js';

/**
 * `SendMessage` → `TASK_STATE_WORKING` push: from the JSON-RPC request leaving the client to the
 * WORKING push arriving at a receiver on 127.0.0.1, one message at a time. On the way: the request
 * (key, JSON-RPC, the SDK's handler), the A2A task and push config stored, the Switchboard task
 * launched (its input sealed, a process spawned), `agent.task.started` relayed to the `a2a.tasks`
 * subscriber, the push's delivery row, the engine's claim, a signed POST. The bare baseline, in the
 * same run: spawning the same process and POSTing to the same receiver once it has spawned.
 */

/**
 * Enough for a p99 that is not one outlier: of 100 samples the 99th percentile is the second
 * largest, so one stall moved it by 10 ms between runs of the same build (2026-12-04: 19.2 to 32.9 ms
 * in seven runs); of 300 it is the fourth largest.
 */
const MESSAGES = Number(process.env.BENCH_A2A_MESSAGES ?? 300);
const WARMUP = 10;
const KEY = 'bench-agent-key-0123456789abcdef';
/** The skill's process: waits for its input, exits 0. */
const COMMAND = [
  process.execPath,
  '-e',
  "process.stdin.resume(); process.stdin.on('end', () => process.exit(0))",
];

interface Arrivals {
  url: string;
  /** The gateway's commit count when each push arrived, by `<task id> <state>`. */
  commitsAt: Map<string, number>;
  /** Resolves at the arrival of the push of `state` for the task. */
  wait(taskId: string, state: string): Promise<number>;
  close(): Promise<void>;
}

async function receiver(commits: () => number = () => 0): Promise<Arrivals> {
  const seen = new Map<string, number>();
  const commitsAt = new Map<string, number>();
  const waiting = new Map<string, (t: number) => void>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200).end();
      let key = 'bare';
      try {
        const update = (JSON.parse(body) as { statusUpdate?: { taskId: string; status: { state: string } } })
          .statusUpdate;
        if (update) key = `${update.taskId} ${update.status.state}`;
        if (update) commitsAt.set(key, commits());
      } catch {
        // the baseline's body
      }
      const w = waiting.get(key);
      if (w) {
        waiting.delete(key);
        w(at);
      } else seen.set(key, at);
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    commitsAt,
    wait: (taskId, state) => {
      const key = taskId === 'bare' ? 'bare' : `${taskId} ${state}`;
      const at = seen.get(key);
      if (at !== undefined) {
        seen.delete(key);
        return Promise.resolve(at);
      }
      return new Promise((r) => waiting.set(key, r));
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** The baseline: the skill's process spawned, then one POST to the receiver. */
async function bare(rx: Arrivals): Promise<number> {
  const t0 = performance.now();
  const child = spawn(COMMAND[0]!, COMMAND.slice(1), { stdio: ['pipe', 'ignore', 'ignore'] });
  const exited = new Promise((r) => child.once('exit', r));
  await new Promise((r) => child.once('spawn', r));
  child.stdin.end('hello');
  const arrived = rx.wait('bare', '');
  await fetch(rx.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const at = await arrived;
  await exited;
  return at - t0;
}

/**
 * Both SQLite writers: `inline` (the default) runs each COMMIT and its fsync on the event loop, so on a
 * disk shared with other work every commit on the path also stalls the request, the relay and the
 * engine; `thread` takes them off it (src/store/sqlite.ts). A CPU profile of the inline run put 21 % of
 * the gateway's samples in COMMIT, more than anything but idle.
 */
export async function benchA2ALatency(): Promise<string[]> {
  return [...(await latency('inline')), ...(await latency('thread'))];
}

async function latency(writer: 'inline' | 'thread'): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-a2a-lat-'));
  const rx = await receiver(() => db.stats().commits);
  const db = new SqliteDb({ path: join(dir, 'a2a.db'), synchronous: 'full', writer });
  await migrate(db, appMigrations());
  const config = parseConfig({
    data_dir: dir,
    server: { port: 0 },
    auth: { keys: [{ name: 'bench', role: 'agent', key: KEY }] },
    egress: { allow: ['127.0.0.1'] },
    tasks: { work_dir: join(dir, 'work') },
    a2a: {
      skills: [
        { id: 'echo', name: 'Echo', description: 'Exits', action: { type: 'command', command: COMMAND } },
      ],
    },
  });
  const server = await startServer(config, {
    db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    modules: [coreModule(), deliveryModule(), tasksModule(), a2aModule()],
  });
  server.services.config.server.public_url = server.url;
  /** Commits from each request to its WORKING push's arrival (the receiver runs in this process). */
  const toWorking: number[] = [];
  const send = async (i: number): Promise<number> => {
    const c0 = db.stats().commits;
    const t0 = performance.now();
    const res = await fetch(`${server.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'SendMessage',
        params: {
          message: { messageId: `m${i}`, role: 'ROLE_USER', parts: [{ text: `message ${i}` }] },
          configuration: { returnImmediately: true, taskPushNotificationConfig: { url: rx.url } },
        },
      }),
    });
    const answer = (await res.json()) as { result?: { task?: { id: string } }; error?: unknown };
    const id = answer.result?.task?.id;
    if (!id) throw new Error(`SendMessage failed: ${JSON.stringify(answer.error ?? answer)}`);
    const working = await rx.wait(id, 'TASK_STATE_WORKING');
    const key = `${id} TASK_STATE_WORKING`;
    if (i >= 0) toWorking.push((rx.commitsAt.get(key) ?? Number.NaN) - c0);
    rx.commitsAt.delete(key);
    // One task at a time: the next message starts on a quiet gateway.
    await rx.wait(id, 'TASK_STATE_COMPLETED');
    return working - t0;
  };
  try {
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < WARMUP; i++) {
      await send(-1 - i);
      await bare(rx);
    }
    // Alternating, so drift on the shared machine hits both alike.
    let cpuMicros = 0;
    const commits0 = db.stats().commits;
    for (let i = 0; i < MESSAGES; i++) {
      const cpu = process.cpuUsage();
      ours.push(await send(i));
      const used = process.cpuUsage(cpu);
      cpuMicros += used.user + used.system;
      base.push(await bare(rx));
    }
    const commits = (db.stats().commits - commits0) / MESSAGES;
    const o = summarize(ours);
    const b = summarize(base);
    // Each message against the bare run right after it: the load of the moment hits both alike.
    const over = summarize(ours.map((t, i) => t - base[i]!));
    return [
      `a2a: SendMessage → WORKING push, ${MESSAGES} messages one at a time (SQLite, synchronous=full, ${writer} writer; load ${loadavg()[0]!.toFixed(1)})`,
      line(
        'bare: spawn the process, POST the receiver',
        `p99 ${fmt(b.p99, 1)} ms`,
        `p50 ${fmt(b.p50, 1)} ms`,
      ),
      line(
        'Switchboard: SendMessage → WORKING push arrives',
        `p99 ${fmt(o.p99, 1)} ms`,
        `p50 ${fmt(o.p50, 1)} ms; goal p99 < 20 ms`,
      ),
      line(
        'Switchboard over bare, message by message',
        `p99 ${fmt(over.p99, 1)} ms`,
        `p50 ${fmt(over.p50, 1)} ms`,
      ),
      line(
        'gateway CPU per message (to the COMPLETED push)',
        `${fmt(cpuMicros / 1000 / MESSAGES, 1)} ms`,
        'this process, every thread; the skill process not counted',
      ),
      line('commits per message (to the COMPLETED push)', fmt(commits, 1), 'group commit merges some'),
      line(
        'commits from the request to the WORKING push',
        fmt(toWorking.reduce((a, b) => a + b, 0) / toWorking.length, 1),
        'mean; counted when the push arrives',
      ),
    ];
  } finally {
    await server.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
