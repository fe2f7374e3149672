import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCard } from '@a2a-js/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild } from '../cli/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { ingressModule } from '../ingress/module.js';
import { mcpModule } from '../mcp/module.js';
import { notifyModule } from '../notify/module.js';
import { runtimeIntents } from '../runtimes/index.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { tasksModule } from '../tasks/module.js';
import { tasksPort } from '../tasks/port.js';
import { agentsModule } from './module.js';
import type { Receipt } from './port.js';
import { type Peer, peerCard, sdkPeer, waitFor } from './testing.js';

/**
 * Collaborations end to end: a real gateway on a socket, four real A2A agents built with the official
 * SDK server on 127.0.0.1 (fast, slow, failing, one that answers garbage), registered through config
 * and through the API, their pushes arriving at the gateway's own `a2a-push` source.
 */

const PUSH_TOKEN = 'push-token-0123456789abcdef';
const FAST_TOKEN = 'fast-secret-token-0123456789';
const KEY = {
  fast: 'fast-key-0123456789abcdef',
  slow: 'slow-key-0123456789abcdef',
  failing: 'failing-key-0123456789abcdef',
  qa: 'qa-key-0123456789abcdef',
};

describe.each(await dialects())('agents working together on %s', (dialect) => {
  let fast: Peer;
  let slow: Peer;
  let failing: Peer;
  let junk: Peer;
  let g: TestGateway;
  let url: string;
  let workDir: string;

  const call = async (path: string, key: string, body?: unknown) => {
    const r = await fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const collaborate = async (body: Record<string, unknown>, key: string = KEYS.agent) => {
    const r = await call('/v1/collaborations', key, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as unknown as Receipt;
  };
  const heartbeat = (id: keyof typeof KEY, body: Record<string, unknown>) =>
    call(`/v1/agents/${id}/heartbeat`, KEY[id], body);

  beforeAll(async () => {
    fast = await sdkPeer('fast', ['analyze', 'summarize', 'secret'], 'fast');
    slow = await sdkPeer('slow', ['analyze', 'slowonly'], 'slow', 1_500);
    failing = await sdkPeer('failing', ['analyze', 'check'], 'fail');
    junk = await sdkPeer('junk', ['junk'], 'garbage');
    workDir = mkdtempSync(join(tmpdir(), 'sb-agents-'));
    g = await testGateway({
      dialect,
      publicUrl: true,
      config: {
        auth: {
          keys: [
            { name: 'ops', role: 'admin', key: KEYS.admin },
            { name: 'bot', role: 'agent', key: KEYS.agent },
            ...Object.entries(KEY).map(([name, key]) => ({ name, role: 'agent', key })),
          ],
        },
        egress: { allow: ['127.0.0.1'] },
        sources: { 'agent-push': { type: 'a2a-push', token: PUSH_TOKEN } },
        agents: {
          fast: { card_url: fast.cardUrl, token_env: 'FAST_TOKEN' },
          slow: { card_url: slow.cardUrl },
          failing: { card_url: failing.cardUrl },
        },
        rules: [
          {
            id: 'no-secret-delegation',
            when: 'kind == "agent.delegate" && resource == "agent:fast/secret"',
            decision: 'deny',
            reason_code: 'NO_SECRET',
          },
        ],
        tasks: { work_dir: workDir },
      },
      modules: [
        coreModule(),
        deliveryModule({ env: {} }),
        tasksModule({ runSupervisor: false }),
        gateModule({ intents: runtimeIntents }),
        ingressModule({ workers: false }),
        notifyModule(),
        mcpModule(),
        agentsModule({ env: { FAST_TOKEN } }),
      ],
    });
    url = g.gateway.url;
  });
  afterAll(async () => {
    await g?.stop();
    await Promise.all([fast, slow, failing, junk].map((p) => p?.close()));
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('fetches the configured agents’ cards at start: their skills are their capabilities', async () => {
    const r = await call('/v1/agents', KEYS.agent);
    const agents = r.body as unknown as { id: string; skills: string[]; status: string }[];
    expect(agents.map((a) => [a.id, a.skills, a.status])).toEqual([
      ['failing', ['analyze', 'check'], 'up'],
      ['fast', ['analyze', 'secret', 'summarize'], 'up'],
      ['slow', ['analyze', 'slowonly'], 'up'],
    ]);
  });

  it('routes by skill and calls the agent with its token; a job done by the first look needs no push', async () => {
    const given = fast.pushUrls.length;
    const receipt = await collaborate({ skill: 'summarize', input: 'the Q3 report' });
    expect(receipt).toMatchObject({
      skill: 'summarize',
      agent: 'fast',
      state: 'completed',
      result: { text: 'fast analysed: the Q3 report' },
      from_task_id: null,
    });
    expect(receipt.ref_id).toMatch(/^col_/);
    expect(receipt.attempts).toEqual([expect.objectContaining({ agent: 'fast', state: 'completed' })]);
    expect(fast.auth.at(-1)).toBe(`Bearer ${FAST_TOKEN}`);
    // GetTask right after SendMessage found it ended: no push config, so no push to accept.
    expect(fast.pushUrls.length).toBe(given);
    const again = await call(`/v1/collaborations/${receipt.ref_id}`, KEYS.agent);
    expect(again.body).toEqual(receipt);
    // Another key does not see the receipt.
    expect((await call(`/v1/collaborations/${receipt.ref_id}`, KEY.qa)).status).toBe(404);
  });

  it('gives a job still running a push config at this gateway, and its push ends the attempt', async () => {
    const receipt = await collaborate({ skill: 'slowonly', input: 'the long report', fallback: false });
    expect(receipt).toMatchObject({ agent: 'slow', state: 'completed' });
    expect(slow.pushUrls.at(-1)).toBe(`${url}/v1/ingress/agent-push`);
    const taskId = receipt.attempts[0]!.task_id;
    // The SDK agent's pushes were accepted by the a2a-push source, its terminal one among them.
    const pushes = await g.gateway.services.log.list({ limit: 500 });
    const accepted = pushes.filter(
      (e) =>
        e.envelope.type === 'integration.webhook.accepted' &&
        e.envelope.redacted_summary.source === 'agent-push' &&
        String(e.envelope.redacted_summary.delivery_id).startsWith(`${taskId}:`),
    );
    expect(accepted.map((e) => e.envelope.redacted_summary.delivery_id)).toContain(
      `${taskId}:TASK_STATE_COMPLETED`,
    );
  });

  it('a remote task that fails fails the attempt with the agent’s reason', async () => {
    const receipt = await collaborate({ skill: 'check', input: 'the numbers' });
    expect(receipt.state).toBe('failed');
    expect(receipt.error).toMatchObject({ code: 'AGENT_FAILED' });
    expect(receipt.error!.message).toContain('no analysis today');
    expect(receipt.attempts).toHaveLength(1);
  });

  it('an agent that answers garbage fails the attempt with the reason, and nothing else breaks', async () => {
    const reg = await call('/v1/agents', KEYS.admin, { id: 'junk', card_url: junk.cardUrl });
    expect(reg.status).toBe(201);
    const receipt = await collaborate({ skill: 'junk', input: 'anything' });
    expect(receipt.state).toBe('failed');
    expect(receipt.error!.code).toBe('AGENT_FAILED');
    expect(receipt.attempts[0]!.error).toBeTruthy();
    expect((await call('/v1/agents', KEYS.agent)).status).toBe(200);
  });

  it('weighted routing prefers the idle and successful agent, and records the scores', async () => {
    // failing has failed once already; twice more and its success EWMA is 0.8³ ≈ 0.51.
    for (let i = 0; i < 2; i++)
      expect((await collaborate({ skill: 'check', input: 'again' })).state).toBe('failed');
    await heartbeat('fast', { load: 0 });
    await heartbeat('slow', { load: 3 });
    await heartbeat('failing', { load: 0 });
    const receipt = await collaborate({ skill: 'analyze', input: 'weighted', strategy: 'weighted' });
    expect(receipt.agent).toBe('fast');
    const events = await g.gateway.services.log.list({ limit: 500 });
    const routed = events.find(
      (e) =>
        e.envelope.type === 'agent.collaboration.routed' &&
        e.envelope.redacted_summary.ref_id === receipt.ref_id,
    )!;
    const candidates = routed.envelope.redacted_summary.candidates as { id: string; score: number }[];
    expect(candidates.map((c) => c.id)).toEqual(['fast', 'failing', 'slow']);
    expect(candidates[0]!.score).toBeGreaterThan(candidates[1]!.score);
  });

  it('times the slow agent out (its remote task cancelled) and the fallback answers; the receipt lists both', async () => {
    await heartbeat('fast', { load: 50 });
    await heartbeat('failing', { status: 'down' });
    await heartbeat('slow', { load: 0 });
    slow.delayMs = 30_000; // far past the deadline, which leaves the fallback time on a busy machine
    const receipt = await collaborate({ skill: 'analyze', input: 'in a hurry', timeout_ms: 2_000 });
    slow.delayMs = 1_500;
    expect(receipt.attempts.map((t) => [t.agent, t.state])).toEqual([
      ['slow', 'timed_out'],
      ['fast', 'completed'],
    ]);
    expect(receipt).toMatchObject({ state: 'completed', agent: 'fast' });
    await waitFor(() => slow.cancels > 0);
    await heartbeat('fast', { load: 0 });
    await heartbeat('failing', { status: 'up' });
  });

  it('refuses a collaboration that would close a cycle A → B → A at once, naming it', async () => {
    const card = AgentCard.toJSON(peerCard('QA', `${fast.url}/rpc`, ['review'])) as Record<string, unknown>;
    expect((await call('/v1/agents', KEY.qa, { id: 'qa', card })).status).toBe(201);
    const calls = slow.calls;
    // qa waits on slow (1.5 s of work)…
    const waiting = call('/v1/collaborations', KEY.qa, {
      skill: 'slowonly',
      input: 'long job',
      fallback: false,
    });
    await waitFor(() => slow.calls > calls);
    // …and slow asks qa for a review: slow → qa → slow.
    const r = await call('/v1/collaborations', KEY.slow, { skill: 'review', input: 'my draft' });
    expect(r.status).toBe(409);
    const err = r.body.error as { code: string; details: { cycle: string[] } };
    expect(err.code).toBe('COLLABORATION_CYCLE');
    expect(err.details.cycle).toEqual(['agent:slow', 'agent:qa', 'agent:slow']);
    const first = await waiting;
    expect(first.body).toMatchObject({ state: 'completed', agent: 'slow' });
    // Once qa no longer waits, the same request is fine.
    expect((await collaborate({ skill: 'review', input: 'my draft' }, KEY.slow)).state).toBe('completed');
  });

  it('refuses a ninth open collaboration from one waiter, and one deeper than loop.max_depth (storm control)', async () => {
    const calls = slow.calls;
    const open = Array.from({ length: 8 }, () =>
      call('/v1/collaborations', KEY.qa, { skill: 'slowonly', input: 'fan', fallback: false }),
    );
    await waitFor(() => slow.calls >= calls + 8);
    const ninth = await call('/v1/collaborations', KEY.qa, {
      skill: 'slowonly',
      input: 'fan',
      fallback: false,
    });
    expect(ninth.status).toBe(429);
    expect(ninth.body.error).toMatchObject({
      code: 'COLLABORATION_LIMIT',
      details: { open: 8, max_fan_out: 8 },
    });
    for (const r of await Promise.all(open)) expect(r.body.state).toBe('completed');
    // A task three levels down (a webhook, two derived tasks) may not ask for a fourth.
    const services = g.gateway.services;
    const cause = await services.emit({
      type: 'integration.webhook.admitted',
      lineage: { hop_count: 0, depth: 2 },
    });
    const task = await g.gateway.kernel.get(tasksPort)!.launch({
      trigger_id: 'deep',
      action: { type: 'command', command: [process.execPath, '-e', ''] },
      trusted: {},
      untrusted: { ref: 'vlt_test', digest: 'sha256:abc', text: 'x' },
      title: 'deep',
      cause,
    });
    const deep = await call('/v1/collaborations', KEYS.admin, {
      skill: 'summarize',
      input: 'x',
      from_task_id: task.id,
    });
    expect(deep.status).toBe(429);
    expect(deep.body.error).toMatchObject({
      code: 'COLLABORATION_LIMIT',
      details: { depth: 4, max_depth: 3 },
    });
  });

  it('lets a rule forbid a delegation (kind agent.delegate, resource agent:<id>/<skill>)', async () => {
    const r = await call('/v1/collaborations', KEYS.agent, { skill: 'secret', input: 'x' });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'DELEGATION_DENIED', details: { reason_code: 'NO_SECRET' } });
    expect(fast.calls).toBeGreaterThan(0);
  });

  it('links a collaboration asked for a task into that task’s timeline (correlation and causation)', async () => {
    const services = g.gateway.services;
    const cause = await services.emit({
      type: 'integration.webhook.admitted',
      lineage: { hop_count: 0, depth: 0 },
    });
    const tasks = g.gateway.kernel.get(tasksPort)!;
    const task = await tasks.launch({
      trigger_id: 'collab',
      action: { type: 'command', command: [process.execPath, '-e', ''] },
      trusted: {},
      untrusted: { ref: 'vlt_test', digest: 'sha256:abc', text: 'x' },
      title: 'needs an analysis',
      cause,
    });
    const receipt = await collaborate(
      { skill: 'summarize', input: 'for the task', from_task_id: task.id },
      KEYS.admin,
    );
    expect(receipt.from_task_id).toBe(task.id);
    const timeline = await services.log.list({ taskId: task.id, limit: 100 });
    const ours = timeline.filter((e) => e.envelope.redacted_summary.ref_id === receipt.ref_id);
    expect(ours.map((e) => e.envelope.type)).toEqual([
      'agent.collaboration.requested',
      'agent.collaboration.routed',
      'agent.collaboration.completed',
    ]);
    for (const e of ours) expect(e.envelope.correlation_id).toBe(task.correlation_id);
    expect(ours[1]!.envelope.causation_id).toBe(ours[0]!.envelope.event_id);
  });

  it('serves ask_agent over MCP, returning the receipt', async () => {
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', url), {
        requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } },
      }),
    );
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('ask_agent');
      const r = await client.callTool({
        name: 'ask_agent',
        arguments: { skill: 'summarize', input: 'via mcp' },
      });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({
        state: 'completed',
        result: { text: 'fast analysed: via mcp' },
      });
      const refused = await client.callTool({
        name: 'ask_agent',
        arguments: { skill: 'nothing', input: 'x' },
      });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('NO_AGENT_FOR_SKILL');
    } finally {
      await client.close();
    }
  });

  it('serves ask_agent on stdio (switchboard mcp), forwarding the call to the gateway under its key', async () => {
    requireBuild();
    const client = new Client({ name: 'stdio-agent', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: { PATH: process.env.PATH ?? '', SWITCHBOARD_URL: url, SWITCHBOARD_KEY: KEY.qa },
        stderr: 'pipe',
      }),
    );
    try {
      const tools = await client.listTools();
      const tool = tools.tools.find((t) => t.name === 'ask_agent');
      expect(tool?.inputSchema).toMatchObject({ required: ['skill', 'input'] });
      const r = await client.callTool({
        name: 'ask_agent',
        arguments: { skill: 'summarize', input: 'via stdio' },
      });
      expect(r.isError).toBeFalsy();
      const receipt = r.structuredContent as unknown as Receipt;
      expect(receipt).toMatchObject({ state: 'completed', result: { text: 'fast analysed: via stdio' } });
      // The receipt is the key's own: the gateway recorded it for qa.
      expect((await call(`/v1/collaborations/${receipt.ref_id}`, KEY.qa)).body).toEqual(receipt);
      const refused = await client.callTool({
        name: 'ask_agent',
        arguments: { skill: 'nothing', input: 'x' },
      });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('NO_AGENT_FOR_SKILL');
      expect(refused.structuredContent).toMatchObject({ error: { details: { skills: expect.any(Array) } } });
      const bad = await client.callTool({ name: 'ask_agent', arguments: { skill: '' } });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toContain('INVALID_PARAMS');
    } finally {
      await client.close();
    }
  }, 30_000);
});
