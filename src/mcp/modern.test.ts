import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore } from '../store/testing.js';
import { KEYS } from '../server/testing.js';
import { type Gateway, startGateway } from './testing.js';

const MODERN = '2026-07-28';

/** A JSON-RPC answer as the tests read it. */
// biome-ignore lint/suspicious/noExplicitAny: each test reads the fields its method answers with
type Answer = { result: any; error: any };
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'stateless-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * Issue 21 point 23: one `/mcp` for both revisions. The 2025-11-25 client is the official SDK's; no
 * official 2026-07-28 client is installed (SDK 1.32.2), so the stateless one is plain fetch sending
 * exactly what the revision specifies: `_meta` version and capabilities, `Mcp-Method`/`Mcp-Name`.
 */
describe('MCP 2026-07-28 (stateless) beside 2025-11-25 on /mcp', () => {
  let g: Gateway;
  beforeAll(async () => {
    const store = await freshStore('sqlite');
    const started = await startGateway(store.db, { agent: KEYS.agent, approver: KEYS.approver });
    g = {
      ...started,
      cleanup: async () => {
        await started.cleanup();
        await store.cleanup();
      },
    };
  });
  afterAll(async () => {
    await g?.cleanup();
  });

  const rpc = async (
    method: string,
    params: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    meta: Record<string, unknown> = META,
  ) => {
    const res = await fetch(`${g.server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEYS.agent}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': method,
        ...(method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: meta } }),
    });
    return {
      status: res.status,
      session: res.headers.get('mcp-session-id'),
      body: (await res.json()) as Answer,
    };
  };

  it('discovers the server without a handshake or a session', async () => {
    const r = await rpc('server/discover');
    expect(r.status).toBe(200);
    expect(r.session).toBeNull();
    expect(r.body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [MODERN, '2025-11-25'],
      capabilities: { tools: {} },
      serverInfo: { name: 'switchboard' },
    });
    expect(r.body.result.instructions).toContain('ask_approval');
  });

  it('lists and calls the tools statelessly, each request on its own', async () => {
    const list = await rpc('tools/list');
    expect(list.body.result.resultType).toBe('complete');
    expect(list.body.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'ask_approval',
      'report_progress',
    ]);
    const before = g.seen.length;
    const call = await rpc('tools/call', {
      name: 'report_progress',
      arguments: { stage: 'failed', summary: 'stateless build broke' },
    });
    expect(call.session).toBeNull();
    expect(call.body.result).toMatchObject({ resultType: 'complete', structuredContent: { status: 'sent' } });
    expect(g.seen.slice(before).map((d) => d.message.summary)).toEqual(['stateless build broke']);
    // A refused argument is a tool error the model can read, as in 2025-11-25.
    const bad = await rpc('tools/call', {
      name: 'report_progress',
      arguments: { stage: 'done', summary: 'x', to: 'me' },
    });
    expect(bad.body.result).toMatchObject({ resultType: 'complete', isError: true });
  });

  it('waits for an approval in one request and returns its id and outcome', async () => {
    g.seen.length = 0;
    const pending = rpc('tools/call', {
      name: 'ask_approval',
      arguments: { action: 'deploy', reason: 'release' },
    });
    const announced = await (async () => {
      for (let i = 0; i < 500; i++) {
        const a = g.seen.find((s) => s.message.kind === 'approval');
        if (a) return a;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('no approval announced');
    })();
    const id = (announced.message.actions as { approvalId: string }).approvalId;
    await fetch(`${g.server.url}/v1/approvals/${id}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.approver}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'reject', comment: 'tomorrow' }),
    });
    const r = await pending;
    expect(r.body.result.structuredContent).toEqual({
      outcome: 'rejected',
      approval_id: id,
      comment: 'tomorrow',
    });
  }, 30_000);

  it('refuses an unsupported version, a header that contradicts the body, and an unknown method', async () => {
    const old = await rpc(
      'tools/list',
      {},
      { 'mcp-protocol-version': '2099-01-01' },
      {
        ...META,
        'io.modelcontextprotocol/protocolVersion': '2099-01-01',
      },
    );
    expect(old.body.error).toMatchObject({ code: -32022, data: { supported: [MODERN, '2025-11-25'] } });
    expect((await rpc('tools/list', {}, { 'mcp-method': 'prompts/list' })).body.error.code).toBe(-32020);
    const name = await rpc(
      'tools/call',
      { name: 'report_progress', arguments: {} },
      { 'mcp-name': 'ask_approval' },
    );
    expect(name.body.error.code).toBe(-32020);
    expect((await rpc('resources/list')).body.error.code).toBe(-32601);
  });

  it('keeps serving 2025-11-25 clients (the official SDK client, with a session) on the same endpoint', async () => {
    const client = new Client({ name: 'classic', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', g.server.url), {
        requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } },
      }),
    );
    try {
      expect(client.getServerVersion()?.name).toBe('switchboard');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['ask_approval', 'report_progress']);
      const r = await client.callTool({
        name: 'report_progress',
        arguments: { stage: 'blocked', summary: 'classic' },
      });
      expect(r.structuredContent).toMatchObject({ status: 'sent' });
    } finally {
      await client.close();
    }
  });
});
