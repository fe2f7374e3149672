import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { AGENT_CARD_PATH, type AgentCard, type Message, type TaskStatus, TaskState } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';
import { Hono } from 'hono';
import { pino } from 'pino';
import { agentsModule } from '../src/agents/module.js';
import { agentNode, WaitGraph } from '../src/agents/graph.js';
import { Registry } from '../src/agents/registry.js';
import { route } from '../src/agents/route.js';
import { gateModule } from '../src/gate/module.js';
import { ingressModule } from '../src/ingress/module.js';
import { parseConfig } from '../src/server/config.js';
import { coreModule } from '../src/server/core-routes.js';
import { startServer } from '../src/server/serve.js';
import { fmt, line, summarize } from './stats.js';

/**
 * `npm run bench -- agents`: (1) one routing decision with 100 registered agents (the registry's
 * skill index, the weighted score of each, the wait-for check), beside a bare loop that only picks the
 * largest of 100 numbers; (2) a collaboration's round trip through Switchboard (POST
 * /v1/collaborations: the gate, the receipt row and its events, SendMessage with a push config, the
 * push through the a2a-push source and the relay, GetTask) beside the same SDK agent called directly
 * with a blocking SendMessage, in the same run, interleaved.
 */

const AGENTS = 100;
const DECISIONS = 100_000;
const ROUND_TRIPS = Number(process.env.RT ?? 200);
const KEY = 'bench-agent-key-0123456789abcdef';
const PUSH_TOKEN = 'bench-push-token-0123456789abcdef';

function benchRouting(): string[] {
  const registry = new Registry();
  const now = Date.now();
  for (let i = 0; i < AGENTS; i++) {
    const id = `agent-${String(i).padStart(3, '0')}`;
    const skills = ['analyze', `only-${i}`];
    const a = registry.put(
      id,
      {
        card: {} as AgentCard,
        json: {},
        name: id,
        skills,
        endpoint: 'http://127.0.0.1:9/rpc',
      },
      {
        source: 'config',
        cardUrl: null,
        weight: 1 + (i % 3),
        token: undefined,
        registeredBy: 'bench',
        lastSeen: now,
      },
    );
    registry.heartbeat(a, now, i % 7, undefined);
    a.successEwma = 0.5 + (i % 10) / 20;
    a.latencyEwma = 50 + (i % 13) * 10;
  }
  const graph = new WaitGraph();
  for (let i = 0; i < 20; i++)
    graph.add(agentNode(`agent-${String(i).padStart(3, '0')}`), agentNode('agent-050'));
  const waiter = 'task:tsk_bench';
  const decide = () =>
    route(registry.withSkill('analyze'), 'weighted', now, 30_000, new Set(), (id) =>
      graph.cycleIf(waiter, agentNode(id)),
    );
  const scores = Array.from({ length: AGENTS }, (_, i) => (i * 7919) % 101);
  const bare = () => {
    let best = -1;
    let at = -1;
    for (let i = 0; i < scores.length; i++)
      if (scores[i]! > best) {
        best = scores[i]!;
        at = i;
      }
    return at;
  };
  const time = (fn: () => unknown) => {
    for (let i = 0; i < 5_000; i++) fn(); // warm-up
    const samples: number[] = [];
    for (let i = 0; i < DECISIONS; i++) {
      const t0 = performance.now();
      fn();
      samples.push((performance.now() - t0) * 1000);
    }
    return summarize(samples);
  };
  const base = time(bare);
  const ours = time(decide);
  return [
    `agents: routing decision, ${AGENTS} agents with the skill, weighted, wait-for check (${fmt(DECISIONS)} decisions, load average ${fmt(loadavg()[0]!, 1)})`,
    line('bare: pick the largest of 100 numbers', `${fmt(base.p99, 1)} µs p99`, `p50 ${fmt(base.p50, 1)} µs`),
    line(
      'Switchboard routing decision',
      `${fmt(ours.p99, 1)} µs p99`,
      `p50 ${fmt(ours.p50, 1)} µs (goal < 50 µs p99)`,
    ),
  ];
}

/** A fast SDK agent: answers each message with one artifact and COMPLETED. */
async function fastAgent() {
  const status = (state: TaskState): TaskStatus => ({
    state,
    message: undefined,
    timestamp: new Date().toISOString(),
  });
  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [],
          metadata: {},
        }),
      );
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: 'r',
            name: 'r',
            description: '',
            parts: [
              {
                content: { $case: 'text', value: 'ok' },
                metadata: undefined,
                filename: '',
                mediaType: 'text/plain',
              },
            ],
            metadata: {},
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: {},
        }),
      );
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: status(TaskState.TASK_STATE_COMPLETED),
          metadata: {},
        }),
      );
      bus.finished();
    },
    async cancelTask() {},
  };
  const app = new Hono();
  let card: AgentCard | undefined;
  let transport: JsonRpcTransportHandler | undefined;
  app.get(`/${AGENT_CARD_PATH}`, async (c) =>
    c.json((await import('@a2a-js/sdk')).AgentCard.toJSON(card!) as object),
  );
  app.post('/rpc', async (c) => {
    const ctx = new ServerCallContext({
      user: new UnauthenticatedUser(),
      requestedVersion: c.req.header('a2a-version') ?? '1.0',
    });
    return c.json((await transport!.handle(await c.req.json(), ctx)) as object);
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => server.once('listening', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card = {
    name: 'bench',
    description: '',
    version: '1',
    supportedInterfaces: [
      { url: `${url}/rpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    capabilities: { streaming: false, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'analyze',
        name: 'analyze',
        description: '',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  transport = new JsonRpcTransportHandler(new DefaultRequestHandler(card, new InMemoryTaskStore(), executor));
  return {
    url,
    card,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

async function benchRoundTrip(sync: 'full' | 'normal'): Promise<string[]> {
  const agent = await fastAgent();
  const dir = mkdtempSync(join(tmpdir(), 'sb-agents-bench-'));
  const config = parseConfig({
    data_dir: join(dir, 'data'),
    server: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    store: { sqlite_synchronous: sync },
    auth: { keys: [{ name: 'bench', role: 'agent', key: KEY }] },
    egress: { allow: ['127.0.0.1'] },
    sources: { 'agent-push': { type: 'a2a-push', token: PUSH_TOKEN } },
    agents: { analyst: { card_url: `${agent.url}/${AGENT_CARD_PATH}` } },
  });
  const server = await startServer(config, {
    modules: [
      coreModule(),
      gateModule({ watch: false, sighup: false }),
      ingressModule({ workers: false }),
      agentsModule(),
    ],
    logger: pino({ level: 'silent' }),
    env: { SWITCHBOARD_VAULT_KEY: Buffer.alloc(32, 7).toString('base64') },
    defaultMetrics: false,
  });
  server.services.config.server.public_url = server.url;
  const client = await new ClientFactory({
    transports: [new JsonRpcTransportFactory({})],
  }).createFromAgentCard(agent.card);
  const message = (): Message => ({
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: 1,
    parts: [
      { content: { $case: 'text', value: 'q3' }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: { skill: 'analyze' },
    extensions: [],
    referenceTaskIds: [],
  });
  const direct = async () => {
    const t0 = performance.now();
    await client.sendMessage({
      tenant: '',
      message: message(),
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: false,
      },
      metadata: undefined,
    });
    return performance.now() - t0;
  };
  const via = async () => {
    const t0 = performance.now();
    const r = await fetch(`${server.url}/v1/collaborations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ skill: 'analyze', input: 'q3' }),
    });
    const body = (await r.json()) as { state?: string };
    if (body.state !== 'completed') throw new Error(`collaboration ended ${JSON.stringify(body)}`);
    return performance.now() - t0;
  };
  // One push as the SDK agent sends it (a terminal statusUpdate), accepted by the a2a-push source.
  let pushes = 0;
  const push = async () => {
    const taskId = `bench-${++pushes}`;
    const t0 = performance.now();
    const r = await fetch(`${server.url}/v1/ingress/agent-push`, {
      method: 'POST',
      headers: { 'content-type': 'application/a2a+json', 'x-a2a-notification-token': PUSH_TOKEN },
      body: JSON.stringify({
        statusUpdate: { taskId, contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' }, metadata: {} },
      }),
    });
    await r.arrayBuffer();
    if (r.status !== 202) throw new Error(`push answered ${r.status}`);
    return performance.now() - t0;
  };
  try {
    for (let i = 0; i < 20; i++) {
      await direct();
      await via();
      await push();
    }
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < ROUND_TRIPS; i++) {
      a.push(await direct());
      b.push(await via());
      c.push(await push());
    }
    const d = summarize(a);
    const s = summarize(b);
    const p = summarize(c);
    const goal = 1.2 * d.p50 + p.p50;
    return [
      `agents: collaboration round trip, one fast SDK agent on 127.0.0.1, SQLite synchronous=${sync} (${ROUND_TRIPS} each, interleaved)`,
      line('bare: SDK client, blocking SendMessage', `${fmt(d.p50, 2)} ms p50`, `p99 ${fmt(d.p99, 2)} ms`),
      line(
        'bare: one push accepted by the a2a-push source',
        `${fmt(p.p50, 2)} ms p50`,
        `p99 ${fmt(p.p99, 2)} ms`,
      ),
      line(
        'through Switchboard (gate, receipt, push, GetTask)',
        `${fmt(s.p50, 2)} ms p50`,
        `p99 ${fmt(s.p99, 2)} ms`,
      ),
      line(
        'over the goal 1.2 × direct + one push (p50)',
        `${fmt(s.p50 / goal, 2)}×`,
        `goal ${fmt(goal, 2)} ms; the SDK agent pushes 3 times per task (task, artifact, status)`,
      ),
    ];
  } finally {
    await server.stop();
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchAgents(): Promise<string[]> {
  return [...benchRouting(), ...(await benchRoundTrip('full')), ...(await benchRoundTrip('normal'))];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const l of await benchAgents()) console.log(l);
}
