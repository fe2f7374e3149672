import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { ntfyStandIn } from '../src/channels/ntfy/testing.js';
import { parseConfig } from '../src/server/config.js';
import { allModules } from '../src/server/modules.js';
import { startServer } from '../src/server/serve.js';
import { migrate } from '../src/store/migrate.js';
import { appMigrations } from '../src/server/modules.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { fmt, line, summarize } from './stats.js';

/** bench/ is compiled to dist-bench/bench/, two levels below the repository root. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = JSON.parse(
  readFileSync(join(ROOT, 'src/runtimes/claude-code/fixtures/PermissionRequest.json'), 'utf8'),
) as Record<string, unknown>;
const AGENT = 'bench-agent-key-0123456789abcdef';
const APPROVER = 'bench-approver-key-0123456789abcd';
/** Sequential prompts: p99 rests on 4 samples at 400, and the run stays within seconds. */
const PROMPTS = 400;
const WARMUP = 40;

interface Receiver {
  server: Server;
  url: string;
  /** Resolves when the publish carrying `bench call <i>` arrives; the value is its arrival time. */
  arrival(i: number): Promise<number>;
}

/** The local ntfy stand-in, noting when each prompt's message arrived. */
async function ntfyReceiver(): Promise<Receiver> {
  const waiting = new Map<number, (at: number) => void>();
  const early = new Map<number, number>();
  const ntfy = await ntfyStandIn((p) => {
    const at = performance.now();
    const m = /bench call (\d+)/.exec(JSON.stringify(p));
    if (!m) return;
    const i = Number(m[1]);
    const done = waiting.get(i);
    if (done) {
      waiting.delete(i);
      done(at);
    } else early.set(i, at);
  });
  return {
    server: ntfy.server,
    url: ntfy.url,
    arrival: (i) => {
      const at = early.get(i);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`prompt ${i} never reached the receiver`)), 10_000);
        waiting.set(i, (t) => {
          clearTimeout(timer);
          resolve(t);
        });
      });
    },
  };
}

const pool = new Agent({ connections: 16, pipelining: 0 });

async function post(url: string, body: unknown, key?: string): Promise<{ status: number; text: string }> {
  const res = await request(url, {
    method: 'POST',
    dispatcher: pool,
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const prompt = (i: number) => ({
  ...FIXTURE,
  session_id: `bench-session-${i}`,
  tool_input: { command: `echo bench call ${i}` },
});

/**
 * The bare handler: what people wire by hand today — a hook endpoint that turns the prompt into the
 * same ntfy publish and answers nothing. No log, no vault, no gate, no governance, no approval.
 */
async function bareHandler(ntfyUrl: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        tool_name: string;
        tool_input: { command?: string };
      };
      const message = {
        topic: 'bench',
        title: 'Approval needed',
        message: `${hook.tool_name}: ${hook.tool_input.command ?? ''}`,
        priority: 5,
        tags: ['warning'],
      };
      request(ntfyUrl, {
        method: 'POST',
        dispatcher: pool,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message),
      })
        .then((r) => r.body.dump())
        .finally(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

/**
 * Issue 8's figure: from a Claude Code `PermissionRequest` hook's arrival to the ntfy request that
 * carries its approve/deny buttons (the gate, an approval, the announcement through notify's
 * governance and the delivery engine), then from the tap to the hook's answer; beside a bare hook
 * handler that sends the same ntfy request with no governance, in the same run.
 */
export async function benchPhone(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-phone-'));
  const receiver = await ntfyReceiver();
  const bare = await bareHandler(receiver.url);
  const db = new SqliteDb({ path: join(dir, 'b.db'), synchronous: 'normal' });
  await migrate(db, appMigrations());
  const config = parseConfig({
    data_dir: dir,
    server: { port: 0, public_url: 'https://switchboard.example' },
    auth: {
      keys: [
        { name: 'bench', role: 'agent', key: AGENT },
        { name: 'phone', role: 'approver', key: APPROVER },
      ],
    },
    channels: { phone: { type: 'ntfy', url: receiver.url, topic: 'bench' } },
    routes: [{ match: 'true', channels: ['phone'] }],
    notify: { rate_per_minute: 0 },
    signals: { permissions: { wait_seconds: 60 } },
    egress: { allow: ['127.0.0.1'] },
  });
  const server = await startServer(config, {
    db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    modules: allModules(),
  });
  try {
    const away = await request(`${server.url}/v1/away`, {
      method: 'PUT',
      dispatcher: pool,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${APPROVER}` },
      body: JSON.stringify({ away: true }),
    });
    await away.body.dump();
    const hookUrl = `${server.url}/v1/runtimes/claude-code/hooks`;
    const toPhone: number[] = [];
    const tapToAnswer: number[] = [];
    let allowed = 0;
    for (let i = 0; i < WARMUP + PROMPTS; i++) {
      const t0 = performance.now();
      const held = post(hookUrl, prompt(i), AGENT);
      const arrived = await receiver.arrival(i);
      const id = await pendingApproval(server.url);
      const t1 = performance.now();
      const tap = await post(`${server.url}/v1/approvals/${id}/decision`, { decision: 'approve' }, APPROVER);
      if (tap.status !== 200) throw new Error(`approve answered ${tap.status}: ${tap.text}`);
      const reply = await held;
      const t2 = performance.now();
      if (i < WARMUP) continue;
      toPhone.push(arrived - t0);
      tapToAnswer.push(t2 - t1);
      if (reply.text.includes('"allow"')) allowed++;
    }
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/hook`;
    const bareMs: number[] = [];
    for (let i = 0; i < WARMUP + PROMPTS; i++) {
      const n = 1_000_000 + i;
      const t0 = performance.now();
      const done = post(bareUrl, prompt(n));
      const arrived = await receiver.arrival(n);
      await done;
      if (i >= WARMUP) bareMs.push(arrived - t0);
    }
    const p = summarize(toPhone);
    const b = summarize(bareMs);
    const tap = summarize(tapToAnswer);
    return [
      `phone — Claude Code PermissionRequest to the phone and back (SQLite, synchronous=normal; load average ${fmt(loadavg()[0] ?? 0, 1)})`,
      line(
        'hook arrival → ntfy request p50 / p99 ms',
        `${fmt(p.p50, 2)} / ${fmt(p.p99, 2)}`,
        `${PROMPTS} prompts (target p99 < 50)`,
      ),
      line(
        'bare hook handler → same ntfy request p50 / p99 ms',
        `${fmt(b.p50, 2)} / ${fmt(b.p99, 2)}`,
        'no log, gate, approval or governance',
      ),
      line(
        'tap approve → hook answered p50 / p99 ms',
        `${fmt(tap.p50, 2)} / ${fmt(tap.p99, 2)}`,
        `${allowed} of ${PROMPTS} answered allow`,
      ),
    ];
  } finally {
    await server.stop();
    await new Promise((r) => receiver.server.close(r));
    await new Promise((r) => bare.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The one pending approval (each prompt is approved before the next is sent). */
async function pendingApproval(url: string): Promise<string> {
  for (let tries = 0; tries < 200; tries++) {
    const res = await request(`${url}/v1/approvals?state=pending`, {
      dispatcher: pool,
      headers: { authorization: `Bearer ${APPROVER}` },
    });
    const list = (await res.body.json()) as { approvals: { id: string }[] };
    const id = list.approvals[0]?.id;
    if (id) return id;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the prompt reached the phone but no approval is pending');
}
