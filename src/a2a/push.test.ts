import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Task, TaskState } from '@a2a-js/sdk';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryModule } from '../delivery/module.js';
import type { Resolver } from '../egress/index.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { tasksModule } from '../tasks/module.js';
import { a2aModule } from './module.js';
import { notifyModule } from '../notify/module.js';
import {
  type A2AGateway,
  a2aGateway,
  nodeSkill,
  REPORTS,
  sdkClient,
  skills,
  userMessage,
  waitFor,
  sendText,
} from './testing.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A push receiver on 127.0.0.1 that answers 503 to the first `failures` attempts of each event. */
async function receiver(failures: number): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      const id = String(req.headers['x-switchboard-event-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      res.statusCode = n <= failures ? 503 : 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const FAST_RETRY = { retry_schedule_ms: [0, 50, 50, 50, 50], jitter: 0 };

/** Never looked up for real: public names get a documentation address, `internal.example` a private one. */
const resolve: Resolver = async (host) =>
  host === 'internal.example'
    ? [{ address: '10.1.2.3', family: 4 }]
    : [{ address: '203.0.113.7', family: 4 }];

function modules() {
  return [coreModule(), deliveryModule(), tasksModule({ runSupervisor: false }), a2aModule({ resolve })];
}

async function rpc(url: string, method: string, params: unknown) {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEYS.agent}`,
      'content-type': 'application/json',
      'a2a-version': '1.0',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}

async function completedTask(g: A2AGateway): Promise<Task> {
  const client = await sdkClient(g.url);
  return (await client.sendMessage({
    tenant: '',
    message: userMessage('done quickly'),
    configuration: undefined,
    metadata: undefined,
  })) as Task;
}

describe.each(await dialects())('A2A push notifications on %s', (dialect) => {
  let g: A2AGateway;
  let r: Awaited<ReturnType<typeof receiver>> | undefined;
  afterEach(async () => {
    await g?.stop();
    await r?.close();
    r = undefined;
  });

  it('delivers each state as a signed StreamResponse: retried with one event id, verified against the JWKS', async () => {
    r = await receiver(2);
    g = await a2aGateway(dialect, {
      modules: modules(),
      config: { egress: { allow: ['127.0.0.1'] }, delivery: FAST_RETRY },
    });
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'push me', {
      returnImmediately: false,
      push: { url: r.url, token: 'client-token-1' },
    });
    expect(sent.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const got = r.got;
    const byEvent = new Map<string, Received[]>();
    // Three states, each answered 503, 503, 200: three events with three attempts each.
    await waitFor(() => {
      byEvent.clear();
      for (const x of got) {
        const id = String(x.headers['x-switchboard-event-id']);
        byEvent.set(id, [...(byEvent.get(id) ?? []), x]);
      }
      return byEvent.size === 3 && [...byEvent.values()].every((a) => a.length === 3) ? true : undefined;
    });
    const jwks = createLocalJWKSet(
      (await (await fetch(`${g.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet,
    );
    const states: string[] = [];
    for (const [eventId, attempts] of byEvent) {
      expect(attempts).toHaveLength(3);
      // The same request each time: one body, one event id.
      expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
      for (const a of attempts) {
        expect(a.headers['content-type']).toBe('application/a2a+json');
        expect(a.headers['x-a2a-notification-token']).toBe('client-token-1');
        const token = String(a.headers.authorization).replace(/^Bearer /, '');
        const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: g.url, audience: r.url });
        expect(protectedHeader.kid).toBeTruthy();
        expect(payload.jti).toBe(eventId);
        expect(payload.task_id).toBe(sent.id);
        expect(payload.body_sha256).toBe(createHash('sha256').update(a.body).digest('hex'));
        expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
      }
      const body = JSON.parse(attempts[0]!.body) as Record<
        string,
        { taskId: string; status: { state: string } }
      >;
      expect(Object.keys(body)).toEqual(['statusUpdate']);
      expect(body.statusUpdate!.taskId).toBe(sent.id);
      states.push(body.statusUpdate!.status.state);
    }
    // Each push is its own delivery, so their order is not promised; each state is pushed once.
    expect(states.sort()).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']);
    // Each push is a delivery row of the engine, delivered after its retries.
    const rows = await waitFor(async () => {
      const all = await g.gateway.services.db.query<{ status: string; attempts: number }>({
        text: "SELECT status, attempts FROM deliveries WHERE channel_type = 'a2a-push'",
      });
      return all.every((x) => x.status === 'succeeded') ? all : undefined;
    });
    expect(rows.map((x) => [x.status, Number(x.attempts)])).toEqual([
      ['succeeded', 3],
      ['succeeded', 3],
      ['succeeded', 3],
    ]);
  });

  it('sends the config authentication as Authorization instead of a JWT', async () => {
    r = await receiver(0);
    g = await a2aGateway(dialect, { modules: modules(), config: { egress: { allow: ['127.0.0.1'] } } });
    const client = await sdkClient(g.url);
    await client.sendMessage({
      tenant: '',
      message: userMessage('basic auth please'),
      configuration: {
        returnImmediately: false,
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: 'mine',
          taskId: '',
          url: r.url,
          token: '',
          authentication: { scheme: 'Basic', credentials: 'dXNlcjpwYXNz' },
        },
      },
      metadata: undefined,
    });
    const got = r.got;
    await waitFor(() => got.some((x) => x.body.includes('TASK_STATE_COMPLETED')) || undefined);
    expect(new Set(got.map((x) => x.headers.authorization))).toEqual(new Set(['Basic dXNlcjpwYXNz']));
    expect(got[0]!.headers['x-a2a-notification-token']).toBeUndefined();
  });

  it("pushes a launched agent's progress as a status message and its done report as an artifactUpdate", async () => {
    r = await receiver(0);
    g = await a2aGateway(dialect, {
      modules: [...modules(), notifyModule()],
      config: { egress: { allow: ['127.0.0.1'] } },
    });
    skills(g)[0]!.action = nodeSkill('report');
    const client = await sdkClient(g.url);
    await client.sendMessage({
      tenant: '',
      message: userMessage('review and report'),
      configuration: {
        returnImmediately: false,
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: '',
          taskId: '',
          url: r.url,
          token: '',
          authentication: undefined,
        },
      },
      metadata: undefined,
    });
    const got = r.got;
    const bodies = await waitFor(() => {
      const all = got.map((x) => JSON.parse(x.body) as Record<string, Record<string, unknown>>);
      return all.some((b) => b.artifactUpdate) &&
        all.some((b) => b.statusUpdate && JSON.stringify(b).includes(REPORTS[0]!.summary))
        ? all
        : undefined;
    });
    const progress = bodies.find((b) => JSON.stringify(b).includes(REPORTS[0]!.summary))!;
    expect(progress.statusUpdate).toMatchObject({
      status: {
        state: 'TASK_STATE_WORKING',
        message: { role: 'ROLE_AGENT', parts: [{ text: REPORTS[0]!.summary }] },
      },
    });
    const artifact = bodies.find((b) => b.artifactUpdate)!;
    expect(Object.keys(artifact)).toEqual(['artifactUpdate']);
    expect(artifact.artifactUpdate).toMatchObject({
      artifact: { parts: [{ text: REPORTS[1]!.summary }, { url: REPORTS[1]!.artifact }] },
      lastChunk: true,
    });
    // Every push has its own event id: the report's, or the task event's.
    const ids = got.map((x) => String(x.headers['x-switchboard-event-id']));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('creates, gets, lists and deletes push configs; credentials are never read back', async () => {
    g = await a2aGateway(dialect, { modules: modules(), config: { egress: { allow: ['127.0.0.1'] } } });
    const task = await completedTask(g);
    const client = await sdkClient(g.url);
    const config = {
      tenant: '',
      id: 'cfg-1',
      taskId: task.id,
      url: 'http://127.0.0.1:8080/hook',
      token: 't',
      authentication: { scheme: 'Bearer', credentials: 'secret-cred' },
    };
    await client.createTaskPushNotificationConfig(config);
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
    expect(got).toMatchObject({
      id: 'cfg-1',
      url: config.url,
      authentication: { scheme: 'Bearer', credentials: '' },
    });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual(['cfg-1']);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
    const after = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(after.configs).toEqual([]);
    const unknown = await rpc(g.url, 'CreateTaskPushNotificationConfig', {
      taskId: 'nope',
      url: 'https://example.com/h',
    });
    expect(unknown.error?.code).toBe(-32001);
  });

  it('refuses a bad push URL or header value with the reason, storing nothing', async () => {
    g = await a2aGateway(dialect, { modules: modules() });
    const task = await completedTask(g);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url: 'https://internal.example/hook' }, /url: .*private_address/],
      [{ url: 'http://public.example/hook' }, /url: .*https_required/],
      [{ url: 'http://127.0.0.1:8080/hook' }, /url: .*(private_address|https_required)/],
      [{ url: 'file:///etc/passwd' }, /url: .*scheme/],
      [{ url: 'data:text/plain,hi' }, /url: .*scheme/],
      [{ url: 'gopher://public.example/' }, /url: .*scheme/],
      [{ url: `https://public.example/${'a'.repeat(2100)}` }, /url: .*at most 2048/],
      [{ url: 'https://public.example/h', token: 'a\r\nX-Evil: 1' }, /token: must not contain CR/],
      [
        { url: 'https://public.example/h', authentication: { scheme: 'Bearer', credentials: 'x\nY: z' } },
        /authentication.credentials: must not contain CR/,
      ],
    ];
    for (const [params, reason] of cases) {
      const res = await rpc(g.url, 'CreateTaskPushNotificationConfig', {
        taskId: task.id,
        id: 'x',
        ...params,
      });
      expect(res.error?.code, JSON.stringify(params).slice(0, 80)).toBe(-32602);
      expect(res.error?.message).toMatch(reason);
    }
    const rows = await g.gateway.services.db.query({ text: 'SELECT * FROM a2a_push_configs' });
    expect(rows).toEqual([]);
  });

  it('answers every push-config call with -32003 when a2a.push is false', async () => {
    g = await a2aGateway(dialect, { modules: modules(), a2a: { push: false } });
    const task = await completedTask(g);
    const card = (await (await fetch(`${g.url}/.well-known/agent-card.json`)).json()) as {
      capabilities: { pushNotifications: boolean };
    };
    expect(card.capabilities.pushNotifications).toBe(false);
    for (const method of [
      'CreateTaskPushNotificationConfig',
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
    ]) {
      const res = await rpc(g.url, method, { taskId: task.id, id: 'x', url: 'https://public.example/h' });
      expect(res.error?.code, method).toBe(-32003);
    }
  });
});
