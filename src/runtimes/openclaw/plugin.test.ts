import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayOptions,
  askGateway,
  notifyGateway,
  payloadFor,
  toResult,
} from '../../../integrations/openclaw/gateway.js';
import plugin, { type PluginApi, optionsFrom } from '../../../integrations/openclaw/index.js';
import { SAMPLE_DECISIONS } from '../runtime.case.js';
import type { Decision } from '../runtime.js';
import { openclaw } from './adapter.js';

/** A stand-in gateway: the OpenClaw adapter answers, with the decision named by the command. */
function fakeGateway(): Promise<{
  server: Server;
  url: string;
  seen: Array<{ auth?: string; body: unknown }>;
}> {
  const seen: Array<{ auth?: string; body: unknown }> = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      const n = openclaw.normalize(text);
      seen.push({ auth: req.headers.authorization, body: JSON.parse(text) });
      const command = String(n.intent?.input.command ?? '');
      if (command === 'hang') return; // never answers
      if (command === 'crash') {
        res.writeHead(500).end('{}');
        return;
      }
      if (command === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"block":false,"extra":1}');
        return;
      }
      const decision: Decision | null = SAMPLE_DECISIONS[command as Decision['decision']] ?? null;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(openclaw.reply(n, decision).httpBody));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, seen });
    }),
  );
}

const call = (command: string) =>
  payloadFor(
    'before_tool_call',
    { toolName: 'exec', params: { command }, toolCallId: 'tc_1' },
    { sessionId: 's1' },
  );

describe('OpenClaw plugin against a local gateway', () => {
  let gateway: Awaited<ReturnType<typeof fakeGateway>>;
  let options: GatewayOptions;

  beforeAll(async () => {
    gateway = await fakeGateway();
    options = { url: gateway.url, key: 'sb_test_key', timeoutMs: 5_000 };
  });
  afterAll(() => {
    gateway.server.closeAllConnections();
    gateway.server.close();
  });

  it('maps deny to block, allow to no decision, modify to params and require_approval to requireApproval', async () => {
    expect(await askGateway(call('deny'), options)).toMatchObject({ block: true });
    expect(await askGateway(call('allow'), options)).toEqual({});
    expect(await askGateway(call('modify'), options)).toEqual({ params: { command: 'echo safe' } });
    expect(await askGateway(call('require_approval'), options)).toMatchObject({
      requireApproval: { timeoutBehavior: 'deny' },
    });
  });

  it('sends the bearer key and the hook name', async () => {
    await askGateway(call('allow'), options);
    expect(gateway.seen.at(-1)).toMatchObject({
      auth: 'Bearer sb_test_key',
      body: { hook_event_name: 'before_tool_call', ctx: { sessionId: 's1' } },
    });
  });

  it('fails closed when the gateway hangs past the timeout', async () => {
    const result = await askGateway(call('hang'), { ...options, timeoutMs: 100 });
    expect(result.block).toBe(true);
    expect(result.blockReason).toContain('100 ms');
  });

  it('fails closed on an HTTP error, an unreadable reply, and an unreachable gateway', async () => {
    expect(await askGateway(call('crash'), options)).toMatchObject({ block: true });
    expect(await askGateway(call('garbage'), options)).toMatchObject({ block: true });
    const down = await askGateway(call('allow'), { url: 'http://127.0.0.1:1', timeoutMs: 500 });
    expect(down.block).toBe(true);
    expect(down.blockReason).not.toContain('sb_test_key');
  });

  it('records observer hooks without throwing, even when the gateway is down', async () => {
    expect(await notifyGateway(payloadFor('session_end', {}, {}), options)).toBe(true);
    expect(
      await notifyGateway(payloadFor('session_end', {}, {}), { url: 'http://127.0.0.1:1', timeoutMs: 200 }),
    ).toBe(false);
  });

  it('registers before_tool_call at high priority and answers through it', async () => {
    const handlers = new Map<
      string,
      (event: Record<string, unknown>, ctx?: Record<string, unknown>) => unknown
    >();
    const api: PluginApi = { on: (name, handler) => handlers.set(name, handler) };
    plugin.register(api, options);
    expect([...handlers.keys()]).toEqual([
      'before_tool_call',
      'after_tool_call',
      'session_start',
      'session_end',
      'agent_end',
    ]);
    const result = await handlers.get('before_tool_call')?.(
      { toolName: 'exec', params: { command: 'deny' } },
      {},
    );
    expect(result).toMatchObject({ block: true });
  });
});

describe('OpenClaw plugin result parsing', () => {
  it('drops signals and functions from what it forwards', () => {
    const payload = payloadFor(
      'before_tool_call',
      { toolName: 'exec', fn: () => 1 },
      { abortSignal: new AbortController().signal },
    );
    expect(payload).toEqual({ hook_event_name: 'before_tool_call', event: { toolName: 'exec' }, ctx: {} });
  });

  it('blocks on params that are not an object and on an approval without a title', () => {
    expect(toResult({ params: 'rm -rf /' })).toMatchObject({ block: true });
    expect(toResult({ requireApproval: { description: 'x' } })).toMatchObject({ block: true });
    expect(toResult([])).toMatchObject({ block: true });
  });

  it('reads its options from plugin config, naming the key variable rather than holding the key', () => {
    const options = optionsFrom(
      { url: 'http://127.0.0.1:9', keyEnv: 'MY_KEY', timeoutMs: 50 },
      { MY_KEY: 'k1' },
    );
    expect(options).toEqual({ url: 'http://127.0.0.1:9', key: 'k1', timeoutMs: 50 });
    expect(optionsFrom(undefined, {})).toEqual({ url: 'http://127.0.0.1:8787', timeoutMs: 12_000 });
  });
});
