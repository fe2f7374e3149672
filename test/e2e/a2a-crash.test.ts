import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as httpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { sdkClient, userMessage } from '../../src/a2a/testing.js';
import { CLI, requireBuild } from '../../src/cli/testing.js';

/**
 * Issue #14's fault case: the gateway is SIGKILLed after a task's states are recorded and before their
 * pushes are sent (the first attempt of each push waits 3 s). After a restart on the same data dir each
 * push reaches the receiver, once.
 */

const AGENT_KEY = 'agent-key-for-the-a2a-crash-test';
const SKILL =
  "let i=''; process.stdin.on('data', d => i += d); process.stdin.on('end', () => process.exit(0));";

function config(receiverHost: string) {
  return `data_dir: ./data
server: { host: 127.0.0.1 }
tenant: { id: default, environment: test }
auth:
  keys:
    - { name: bot, role: agent, key_env: SB_AGENT_KEY }
egress: { allow: ['${receiverHost}'] }
delivery: { retry_schedule_ms: [3000, 200, 200], jitter: 0 }
a2a:
  skills:
    - id: quick
      name: Quick
      description: Ends at once
      action: { type: command, command: ['${process.execPath}', '-e', "${SKILL}"] }
`;
}

const ENV = {
  PATH: process.env.PATH ?? '',
  SB_AGENT_KEY: AGENT_KEY,
  SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 9).toString('base64'),
};

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function serve(cwd: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port)], {
    cwd,
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/listening on http/.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code} before listening: ${out}`));
    });
  });
}

describe('the gateway SIGKILLed between a state change and its push', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('delivers every push after the restart, once each', async () => {
    requireBuild();
    const seen = new Map<string, number>();
    const receiver = httpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['x-switchboard-event-id']);
        seen.set(id, (seen.get(id) ?? 0) + 1);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => receiver.close(() => r())));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    const cwd = mkdtempSync(join(tmpdir(), 'sb-a2a-crash-'));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    writeFileSync(join(cwd, 'switchboard.yaml'), config('127.0.0.1'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;

    const first = await serve(cwd, port);
    const client = await sdkClient(url, AGENT_KEY);
    const task = (await client.sendMessage({
      tenant: '',
      message: userMessage('crash me'),
      configuration: {
        returnImmediately: false,
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: '',
          taskId: '',
          url: hook,
          token: '',
          authentication: undefined,
        },
      },
      metadata: undefined,
    })) as Task;
    expect(task.status?.state).toBe(3); // TASK_STATE_COMPLETED: every state is recorded
    first.kill('SIGKILL');
    await new Promise<void>((r) => (first.exitCode !== null ? r() : first.once('exit', () => r())));
    expect(seen.size).toBe(0); // the kill came before any push's first attempt

    const second = await serve(cwd, port);
    cleanups.push(() => {
      second.kill('SIGTERM');
    });
    const until = Date.now() + 20_000;
    while (seen.size < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(seen.size).toBe(3); // SUBMITTED, WORKING, COMPLETED
    await new Promise((r) => setTimeout(r, 500));
    expect([...seen.values()]).toEqual([1, 1, 1]);
  }, 60_000);
});
