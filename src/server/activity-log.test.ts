import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { createLogger } from '../kernel/logger.js';
import { notifyModule } from '../notify/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { parseConfig } from './config.js';
import { coreModule } from './core-routes.js';
import { type RunningServer, startServer } from './serve.js';
import { KEYS } from './testing.js';

/**
 * Issue 21 point 20: the server log says what happened — a line per decision, approval step, delivery
 * failure and dead letter — read from a real gateway's pino output, and a secret in a tool input, an
 * approval's reason or a rejection's comment never reaches it.
 */
const SECRET = 'sk-live-Zq8xVb3nT5wR9yLm2kPq';

const RULES = [
  {
    id: 'no-force-push',
    when: 'tool == "Bash" && input.command.contains("push --force")',
    decision: 'deny',
    reason_code: 'FORCE_PUSH',
  },
  {
    id: 'deploys-need-a-person',
    when: 'tool == "Bash" && input.command.startsWith("deploy")',
    decision: 'require_approval',
    reason_code: 'DEPLOY',
  },
];

const preToolUse = (command: string) => ({
  session_id: 'sess-log',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/home/dev/project',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command },
  tool_use_id: 'toolu_log',
});

/** Two local ntfy endpoints: one refuses for good (400: a dead letter), one is down (503: a failure). */
async function receivers(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    res.statusCode = req.url?.startsWith('/refuses') ? 400 : 503;
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.each(await dialects())('the server log on %s', (dialect) => {
  let store: TestStore | undefined;
  let dataDir: string | undefined;
  let gateway: RunningServer | undefined;
  let receiver: Server | undefined;
  afterEach(async () => {
    await gateway?.stop();
    await store?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await new Promise((r) => receiver?.close(r));
  });

  it('has one line per decision, approval step, delivery failure and dead letter, and no secret', async () => {
    const lines: Record<string, unknown>[] = [];
    let raw = '';
    const destination = new Writable({
      write(chunk, _enc, done) {
        raw += String(chunk);
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const peer = await receivers();
    receiver = peer.server;
    store = await freshStore(dialect);
    dataDir = mkdtempSync(join(tmpdir(), 'sb-log-'));
    gateway = await startServer(
      parseConfig({
        data_dir: dataDir,
        server: { port: 0 },
        rules: RULES,
        hooks: { approval_wait_seconds: 30 },
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
          ],
        },
        channels: {
          refuses: { type: 'ntfy', url: `${peer.url}/refuses`, topic: 'agents' },
          down: { type: 'ntfy', url: `${peer.url}/down`, topic: 'agents' },
        },
        routes: [{ match: 'true', channels: ['refuses', 'down'] }],
        egress: { allow: ['127.0.0.1'] },
      }),
      {
        db: store.db,
        logger: createLogger('info', destination),
        env: {},
        defaultMetrics: false,
        modules: [
          coreModule(),
          deliveryModule({ env: {} }),
          approvalsModule(),
          gateModule(),
          runtimesModule(),
          notifyModule(),
        ],
      },
    );
    const hook = (command: string) =>
      fetch(`${gateway!.url}/v1/runtimes/claude-code/hooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
        body: JSON.stringify(preToolUse(command)),
      });

    expect((await hook(`git push --force https://x:${SECRET}@example.com/repo`)).status).toBe(200);
    const held = hook(`deploy web --token=${SECRET}`);
    const approvalId = await until(async () => {
      const res = await fetch(`${gateway!.url}/v1/approvals?state=pending`, {
        headers: { authorization: `Bearer ${KEYS.approver}` },
      });
      return ((await res.json()) as { approvals: { id: string }[] }).approvals[0]?.id;
    });
    const decided = await fetch(`${gateway.url}/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.approver}` },
      body: JSON.stringify({ decision: 'reject', comment: `not with ${SECRET}` }),
    });
    expect(decided.status).toBe(200);
    await held;

    const line = (type: string, extra: Record<string, unknown> = {}) =>
      lines.find((l) => l.type === type && Object.entries(extra).every(([k, v]) => l[k] === v));
    await until(async () =>
      line('agent.approval.rejected') &&
      line('integration.delivery.dead', { status: 400 }) &&
      line('integration.delivery.failed', { status: 503 })
        ? true
        : undefined,
    ).catch((err: unknown) => {
      throw new Error(
        `${(err as Error).message}; the log had: ${lines.map((l) => `${l.type ?? ''} ${l.msg}`).join(' | ')}`,
      );
    });
    expect(line('agent.tool.denied')).toMatchObject({
      tool: 'Bash',
      session_id: 'sess-log',
      reason_code: 'FORCE_PUSH',
      msg: 'decision: deny Bash (FORCE_PUSH)',
    });
    expect(line('agent.tool.deferred')).toMatchObject({
      decision: 'require_approval',
      approval_id: approvalId,
      msg: 'decision: require_approval Bash (DEPLOY)',
    });
    expect(line('agent.approval.requested')).toMatchObject({ approval_id: approvalId, level: 30 });
    expect(line('agent.approval.rejected')).toMatchObject({ approval_id: approvalId, decided_by: 'me' });
    expect(line('integration.delivery.dead', { status: 400 })).toMatchObject({
      level: 40,
      channel: 'ntfy',
      reason: 'rejected with 400',
    });
    expect(line('integration.delivery.failed', { status: 503 })).toMatchObject({
      channel: 'ntfy',
      level: 30,
    });
    // One line each: the deny is logged once, not per module that saw it.
    expect(lines.filter((l) => l.type === 'agent.tool.denied')).toHaveLength(1);
    expect(raw).not.toContain(SECRET);
    expect(raw).not.toContain(KEYS.agent);
    expect(raw).not.toContain(KEYS.approver);
  }, 60_000);
});

async function until<T>(fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((r) => setTimeout(r, 50));
  }
}
