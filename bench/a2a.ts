import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import {
  DefaultPushNotificationSender,
  InMemoryPushNotificationStore,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import { SigningKeys } from '../src/a2a/keys.js';
import { PUSH_TYPE, type PushPayload, pushBody, pushDestination, pushSender } from '../src/a2a/push.js';
import { A2APushStore, A2ATaskStore, KeyUser } from '../src/a2a/store.js';
import { deliveryConfigSchema, deliveryPolicies } from '../src/delivery/config.js';
import { DeliveryEngine, ENGINE_DEFAULTS } from '../src/delivery/engine/engine.js';
import { createDeliveryService } from '../src/delivery/engine/service.js';
import { createEgress } from '../src/egress/index.js';
import { newId } from '../src/envelope/index.js';
import { EventLog } from '../src/log/log.js';
import { Vault } from '../src/log/vault.js';
import type { Message } from '../src/notify/port.js';
import { appMigrations } from '../src/server/modules.js';
import { migrate } from '../src/store/migrate.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { fmt, line } from './stats.js';

/**
 * A2A pushes per second to a local receiver: Switchboard's (one delivery row per push, claimed by the
 * engine, an ES256 JWT signed per attempt, the egress guard on every connect, the attempt recorded)
 * beside the SDK's `DefaultPushNotificationSender` (one fire-and-forget `fetch` per push, nothing
 * stored, nothing signed), the same pushes spread over the same number of tasks, in the same run.
 */

const N = 2000;
const ROUNDS = 3;
/** The SDK serializes pushes per task; both sides spread them over this many tasks. */
const TASKS = ENGINE_DEFAULTS.batchSize * ENGINE_DEFAULTS.loops;

function receiver() {
  let count = 0;
  let waiting: { n: number; resolve: () => void } | undefined;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      if (waiting && count >= waiting.n) waiting.resolve();
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  return {
    server,
    reset: () => {
      count = 0;
    },
    waitFor: (n: number) =>
      new Promise<void>((resolve) => {
        if (count >= n) resolve();
        else waiting = { n, resolve };
      }),
  };
}

function update(taskId: string): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId,
        contextId: 'ctx',
        status: {
          state: TaskState.TASK_STATE_WORKING,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: {},
      },
    },
  };
}

/** Pushes per second of wall time, and per second of this process's CPU (sender and receiver alike). */
interface Rate {
  wall: number;
  cpu: number;
}

function clock(): () => Rate {
  const start = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return {
      wall: N / ((performance.now() - start) / 1000),
      cpu: N / ((used.user + used.system) / 1e6),
    };
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

async function sdkSender(url: string, rx: ReturnType<typeof receiver>): Promise<Rate> {
  rx.reset();
  const store = new InMemoryPushNotificationStore();
  const ctx = new ServerCallContext({ requestedVersion: '1.0' });
  for (let t = 0; t < TASKS; t++)
    await store.save(`t${t}`, ctx, {
      tenant: '',
      id: 'c',
      taskId: `t${t}`,
      url,
      token: 'tok',
      authentication: undefined,
    });
  const sender = new DefaultPushNotificationSender(store);
  // The SDK logs a line per push (console.info); muted, so the baseline is its sending, not our terminal.
  const { log, info } = console;
  console.log = () => {};
  console.info = () => {};
  try {
    const stop = clock();
    await Promise.all(Array.from({ length: N }, (_, i) => sender.send(update(`t${i % TASKS}`), ctx)));
    await rx.waitFor(N);
    return stop();
  } finally {
    console.log = log;
    console.info = info;
  }
}

async function durable(dir: string, url: string, rx: ReturnType<typeof receiver>): Promise<Rate> {
  rx.reset();
  const db = new SqliteDb({ path: join(dir, `a2a-${Date.now()}.db`), synchronous: 'full' });
  await migrate(db, appMigrations());
  const log = new EventLog(db, { tenant_id: 'bench', environment: 'bench' });
  const vault = new Vault(db, Buffer.alloc(32, 3));
  const keys = new SigningKeys({
    db,
    vault,
    tenantId: 'bench',
    now: Date.now,
    issuer: () => 'http://127.0.0.1',
  });
  await keys.current();
  const tasks = new A2ATaskStore({ db, now: Date.now });
  const configs = new A2APushStore({
    db,
    now: Date.now,
    vault,
    tenantId: 'bench',
    tasks,
    check: async () => {},
  });
  const ctx = new ServerCallContext({
    user: new KeyUser({ name: 'bench', role: 'agent' }),
    requestedVersion: '1.0',
  });
  for (let t = 0; t < TASKS; t++)
    await configs.save(`t${t}`, ctx, {
      tenant: '',
      id: 'c',
      taskId: `t${t}`,
      url,
      token: 'tok',
      authentication: undefined,
    });
  const policies = deliveryPolicies(deliveryConfigSchema.parse({}));
  const sender = pushSender({ db, vault, keys });
  const dynamic = (d: string) => (d.startsWith(`${PUSH_TYPE}:`) ? sender : undefined);
  const svc = createDeliveryService({
    db,
    log,
    channels: () => ({}),
    now: Date.now,
    endpointPolicy: policies,
    dynamic,
  });
  const egress = createEgress({ allow: ['127.0.0.1'] });
  const engine = new DeliveryEngine({
    db,
    log,
    channels: () => ({}),
    policies,
    egress,
    secret: () => undefined,
    now: Date.now,
    dynamic,
  });
  engine.start();
  const stop = clock();
  for (let i = 0; i < N; i += 500) {
    await db.tx(async (tx) => {
      for (let j = i; j < Math.min(N, i + 500); j++) {
        const taskId = `t${j % TASKS}`;
        const eventId = newId('event');
        const s = update(taskId).payload;
        if (s?.$case !== 'statusUpdate') continue;
        const payload: PushPayload = { eventId, taskId, configId: 'c', body: await pushBody(s) };
        await svc.enqueue(tx, {
          eventId,
          destination: pushDestination(url),
          message: payload as unknown as Message,
        });
      }
    });
    engine.wake();
  }
  await rx.waitFor(N);
  const rate = stop();
  await engine.stop();
  await egress.close();
  await db.close();
  return rate;
}

export async function benchA2A(): Promise<string[]> {
  const out = [
    `a2a: ${N} push notifications to a local receiver over ${TASKS} tasks (SQLite, synchronous=full)`,
  ];
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-a2a-'));
  const rx = receiver();
  await new Promise<void>((r) => rx.server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(rx.server.address() as AddressInfo).port}/hook`;
  try {
    // Interleaved rounds, the median of each side: the machine is shared, so a burst of someone
    // else's work lands on both sides alike rather than on one run.
    const sdk: Rate[] = [];
    const ours: Rate[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      sdk.push(await sdkSender(url, rx));
      ours.push(await durable(dir, url, rx));
    }
    const base = { wall: median(sdk.map((r) => r.wall)), cpu: median(sdk.map((r) => r.cpu)) };
    const mine = { wall: median(ours.map((r) => r.wall)), cpu: median(ours.map((r) => r.cpu)) };
    out.push(
      line(
        'SDK DefaultPushNotificationSender (fetch, no store, unsigned)',
        `${fmt(base.wall)}/s`,
        `${fmt(base.cpu)} per CPU-second; median of ${ROUNDS}`,
      ),
    );
    out.push(
      line(
        'Switchboard (delivery row, JWT per attempt, egress guard, attempt event)',
        `${fmt(mine.wall)}/s`,
        `${fmt(mine.cpu)} per CPU-second; ${fmt(mine.wall / base.wall, 2)} of the SDK's rate, ${fmt(mine.cpu / base.cpu, 2)} per CPU; goal ≥ 1.0`,
      ),
    );
  } finally {
    rx.server.closeAllConnections();
    await new Promise<void>((r) => rx.server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
