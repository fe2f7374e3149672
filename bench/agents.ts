import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentCard, Message } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { pino } from 'pino';
import { decide } from '../src/agents/waits.js';
import { agentNode, WaitGraph } from '../src/agents/graph.js';
import { agentsModule } from '../src/agents/module.js';
import { Registry } from '../src/agents/registry.js';
import { ranked } from '../src/agents/route.js';
import { sdkPeer } from '../src/agents/testing.js';
import { gateModule } from '../src/gate/module.js';
import { ingressModule } from '../src/ingress/module.js';
import { parseConfig } from '../src/server/config.js';
import { coreModule } from '../src/server/core-routes.js';
import { startServer } from '../src/server/serve.js';
import { measure, us } from './gate.js';
import { costLine, costs, fmt, line, summarize } from './stats.js';

/**
 * `npm run bench -- agents`: (1) one routing decision with 100 registered agents as the engine makes
 * it (`decide`: the registry's skill index, the weighted score of each, the wait-for check against a
 * graph with 20 open edges) and with the candidate list its event records, beside a bare loop that
 * only picks the largest of 100 numbers; p99 is also given per 1k-window (bench/gate.ts), since a
 * loaded machine's preemptions inflate the overall tail; (2) a collaboration's round trip through Switchboard (POST
 * /v1/collaborations: the gate, the receipt row and its events, SendMessage, one GetTask that finds the
 * fast job ended, so it is given no push config) beside the same SDK agent called directly with a
 * blocking SendMessage, in the same run, interleaved, and one push accepted by the a2a-push source.
 */

const AGENTS = 100;
const ROUND_TRIPS = Number(process.env.RT ?? 200);
const KEY = 'bench-agent-key-0123456789abcdef';
const PUSH_TOKEN = 'bench-push-token-0123456789abcdef';

export function benchRouting(): string[] {
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
  const asked = { waiter: 'task:tsk_bench', req: { strategy: 'weighted' as const } };
  const decision = () => decide(graph, registry.withSkill('analyze'), asked, now, 30_000);
  const withEvent = () => {
    const r = decision();
    return r.kind === 'chosen' ? ranked(r.candidates) : r;
  };
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
  const base = measure(1, bare);
  const ours = measure(1, decision);
  const full = measure(1, withEvent);
  const row = (label: string, s: ReturnType<typeof measure>, note = '') =>
    line(
      label,
      `${us(s.p99).trim()} p99`,
      `p99/1k-window ${us(s.windowP99).trim()}, p50 ${us(s.p50).trim()}${note}`,
    );
  return [
    `agents: routing decision, ${AGENTS} agents with the skill, weighted, wait-for check (40,000 decisions per row, load average ${fmt(loadavg()[0]!, 1)})`,
    row('bare: pick the largest of 100 numbers', base),
    row('Switchboard routing decision (decide)', ours, ' (goal < 50 µs p99)'),
    row("decision + the event's 20 listed candidates", full),
  ];
}

export async function benchRoundTrip(sync: 'full' | 'normal'): Promise<string[]> {
  const agent = await sdkPeer('bench', ['analyze'], 'fast');
  const dir = mkdtempSync(join(tmpdir(), 'sb-agents-bench-'));
  const config = parseConfig({
    data_dir: join(dir, 'data'),
    server: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    store: { sqlite_synchronous: sync },
    auth: { keys: [{ name: 'bench', role: 'agent', key: KEY }] },
    egress: { allow: ['127.0.0.1'] },
    sources: { 'agent-push': { type: 'a2a-push', token: PUSH_TOKEN } },
    agents: { analyst: { card_url: agent.cardUrl } },
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
    // Commits and relay claims per operation, each measured alone (the SDK agent's pushes included).
    const COUNTED = 20;
    const v0 = costs(server.services);
    for (let i = 0; i < COUNTED; i++) await via();
    await new Promise((r) => setTimeout(r, 500)); // late pushes and the relay's acks land
    const v1 = costs(server.services);
    for (let i = 0; i < COUNTED; i++) await push();
    await new Promise((r) => setTimeout(r, 500));
    const p1 = costs(server.services);
    const d = summarize(a);
    const s = summarize(b);
    const p = summarize(c);
    const goal = 1.2 * d.p50 + p.p50;
    return [
      `agents: collaboration round trip, one fast SDK agent on 127.0.0.1, SQLite synchronous=${sync} (${ROUND_TRIPS} each, interleaved, load average ${fmt(loadavg()[0]!, 1)})`,
      line('bare: SDK client, blocking SendMessage', `${fmt(d.p50, 2)} ms p50`, `p99 ${fmt(d.p99, 2)} ms`),
      line(
        'bare: one push accepted by the a2a-push source',
        `${fmt(p.p50, 2)} ms p50`,
        `p99 ${fmt(p.p99, 2)} ms`,
      ),
      line(
        'through Switchboard (gate, receipt, GetTask)',
        `${fmt(s.p50, 2)} ms p50`,
        `p99 ${fmt(s.p99, 2)} ms`,
      ),
      line(
        'over the goal 1.2 × direct + one push (p50)',
        `${fmt(s.p50 / goal, 2)}×`,
        `goal ${fmt(goal, 2)} ms; a job done by the first GetTask is sent no push config`,
      ),
      costLine('  per collaboration', v0, v1, COUNTED),
      costLine('  per push', v1, p1, COUNTED),
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
