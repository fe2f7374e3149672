import { waitFor as waitForTask } from '../tasks/testing.js';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentCard, Message, Task } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { deliveryModule } from '../delivery/module.js';
import type { Module } from '../kernel/module.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, testGateway, type TestGateway } from '../server/testing.js';
import type { Dialect } from '../store/port.js';
import { tasksModule } from '../tasks/module.js';
import type { A2AConfig } from './config.js';
import { a2aModule } from './module.js';

/** Test helpers for the a2a suites (not shipped behaviour). */

/**
 * What a `report` skill posts with its task-scoped key (SWITCHBOARD_KEY) to SWITCHBOARD_URL's
 * `POST /v1/progress`, in order, before it exits 0.
 */
export const REPORTS = [
  { stage: 'progress', summary: 'read the diff, 2 files' },
  { stage: 'done', summary: 'no findings', artifact: 'https://ci.example/review/42' },
];

const postReports = `(async () => { for (const r of ${JSON.stringify(REPORTS)}) { const res = await fetch(new URL('/v1/progress', process.env.SWITCHBOARD_URL), { method: 'POST', headers: { authorization: 'Bearer ' + process.env.SWITCHBOARD_KEY, 'content-type': 'application/json' }, body: JSON.stringify(r) }); if (!res.ok) { process.stderr.write('progress ' + res.status); process.exit(4); } } process.exit(0); })().catch((e) => { process.stderr.write(String(e)); process.exit(5); })`;

/** A skill action that is a real process: reads its input from stdin, then `mode` decides. */
export function nodeSkill(mode: 'ok' | 'fail' | 'hang' | 'report', pidFile?: string) {
  const atEnd = {
    ok: "process.stdout.write('reviewed: ' + input.length + ' chars'); process.exit(0)",
    report: postReports,
    fail: "process.stderr.write('no'); process.exit(3)",
    hang: 'setInterval(() => {}, 1000)',
  }[mode];
  const recordPid = pidFile ? "require('fs').writeFileSync(process.env.PID_FILE, String(process.pid));" : '';
  const script = `let input = ''; ${recordPid} process.stdin.on('data', (d) => (input += d)); process.stdin.on('end', () => { ${atEnd} });`;
  return {
    type: 'command' as const,
    command: [process.execPath, '-e', script],
    ...(pidFile ? { env: { PID_FILE: pidFile } } : {}),
  };
}

/** The modules an A2A gateway runs unless a test names its own. */
export function defaultModules(): Module[] {
  return [coreModule(), deliveryModule(), tasksModule({ runSupervisor: false }), a2aModule()];
}

export interface A2AGateway extends TestGateway {
  url: string;
  workDir: string;
}

export async function a2aGateway(
  dialect: Dialect,
  opts: {
    a2a?: Record<string, unknown>;
    tasks?: Record<string, unknown>;
    config?: Record<string, unknown>;
    modules?: Module[];
  } = {},
): Promise<A2AGateway> {
  const workDir = mkdtempSync(join(tmpdir(), 'sb-a2a-'));
  const g = await testGateway({
    dialect,
    publicUrl: true,
    config: {
      auth: {
        keys: [
          { name: 'ops', role: 'admin', key: KEYS.admin },
          { name: 'bot', role: 'agent', key: KEYS.agent },
          { name: 'other', role: 'agent', key: 'other-agent-key-0123456789abcdef' },
        ],
      },
      tasks: { work_dir: workDir, kill_grace_seconds: 0.2, ...opts.tasks },
      a2a: {
        skills: [
          { id: 'review', name: 'Review a change', description: 'Reviews the diff', action: nodeSkill('ok') },
        ],
        ...opts.a2a,
      },
      ...opts.config,
    },
    modules: opts.modules ?? defaultModules(),
  });
  return { ...g, url: g.gateway.url, workDir };
}

/** The running gateway's skills, to change what a skill runs between two messages. */
export function skills(g: A2AGateway): A2AConfig['skills'] {
  return (g.gateway.services.config as unknown as { a2a: A2AConfig }).a2a.skills;
}

export const OTHER_KEY = 'other-agent-key-0123456789abcdef';

export function bearerFetch(key: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
}

/** The official SDK client for the gateway's card, authenticating with `key`. */
export async function sdkClient(url: string, key: string = KEYS.agent, legacy = false): Promise<Client> {
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl: bearerFetch(key), legacyCompat: { enabled: legacy } }),
    ],
  });
  const card = await new DefaultAgentCardResolver().resolve(url);
  const only = (c: AgentCard): AgentCard => ({
    ...c,
    supportedInterfaces: c.supportedInterfaces.filter((i) => i.protocolVersion === (legacy ? '0.3' : '1.0')),
  });
  return factory.createFromAgentCard(only(card));
}

export function userMessage(text: string, metadata?: Record<string, unknown>): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: 1,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The tasks suite's poll, with a longer default: an A2A round trip runs a real process. */
export function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  return waitForTask(fn, timeoutMs);
}

export interface PushReceiver {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

/** A push receiver on 127.0.0.1 that answers 200 and keeps each body. */
export async function pushReceiver(): Promise<PushReceiver> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      bodies.push(body);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * `SendMessage` of one text part, as the SDK client sends it: answered at once unless
 * `returnImmediately` is false, with a push config when `push` names a URL.
 */
export async function sendText(
  client: Client,
  text: string,
  o: { returnImmediately?: boolean; push?: { url: string; id?: string; token?: string } } = {},
): Promise<Task> {
  return (await client.sendMessage({
    tenant: '',
    message: userMessage(text),
    configuration: {
      returnImmediately: o.returnImmediately ?? true,
      acceptedOutputModes: [],
      taskPushNotificationConfig: o.push
        ? {
            tenant: '',
            id: o.push.id ?? '',
            taskId: '',
            url: o.push.url,
            token: o.push.token ?? '',
            authentication: undefined,
          }
        : undefined,
    },
    metadata: undefined,
  })) as Task;
}
