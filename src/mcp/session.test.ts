import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, type TestStore } from '../store/testing.js';
import { KEYS } from '../server/testing.js';
import { run as notifyCli } from '../cli/notify.js';
import { Gateway as GatewayClient } from './gateway.js';
import { type Gateway, startGateway } from './testing.js';

const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('the /mcp session table and the HTTP clients', () => {
  let store: TestStore;
  let g: Gateway;
  beforeAll(async () => {
    store = await freshStore('sqlite');
    g = await startGateway(store.db, { agent: KEYS.agent, approver: KEYS.approver });
    g.server.services.keys.add('other-agent-key-0123456789', { name: 'other', role: 'agent' });
  });
  afterAll(async () => {
    await g.cleanup();
    await store.cleanup();
  });

  const mcp = (key: string, body: unknown, extra: Record<string, string> = {}, method = 'POST') =>
    fetch(`${g.server.url}/mcp`, {
      method,
      headers: { ...HEADERS, authorization: `Bearer ${key}`, ...extra },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function open(key: string): Promise<string> {
    const res = await mcp(key, INIT);
    expect(res.status).toBe(200);
    await res.text();
    return res.headers.get('mcp-session-id')!;
  }

  it('answers a request without a session that is not initialize with 400', async () => {
    const res = await mcp(KEYS.agent, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(400);
  });

  it('answers another key presenting a session id as if the session did not exist', async () => {
    const sid = await open(KEYS.agent);
    const res = await mcp(
      'other-agent-key-0123456789',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(res.status).toBe(404);
  });

  it('answers a session opened for one task as unknown to the same key naming another task', async () => {
    const res = await mcp(KEYS.agent, INIT, { 'x-switchboard-task': 'tsk_A' });
    const sid = res.headers.get('mcp-session-id')!;
    await res.text();
    const other = await mcp(
      KEYS.agent,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': sid, 'x-switchboard-task': 'tsk_B' },
    );
    expect(other.status).toBe(404);
  });

  it('ends a session on DELETE', async () => {
    const sid = await open(KEYS.agent);
    const del = await mcp(
      KEYS.agent,
      undefined,
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      'DELETE',
    );
    expect(del.status).toBe(200);
    const after = await mcp(
      KEYS.agent,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(after.status).toBe(404);
  });

  it('answers GET with 405, a body that is not JSON with a JSON-RPC parse error, and no key with 401', async () => {
    expect((await mcp(KEYS.agent, undefined, {}, 'GET')).status).toBe(405);
    const bad = await fetch(`${g.server.url}/mcp`, {
      method: 'POST',
      headers: { ...HEADERS, authorization: `Bearer ${KEYS.agent}` },
      body: '{"jsonrpc":',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
    expect(
      (await fetch(`${g.server.url}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) }))
        .status,
    ).toBe(401);
    expect((await mcp(KEYS.approver, INIT)).status).toBe(403);
  });

  it('reports progress with the gateway client that switchboard mcp and notify use, task from SWITCHBOARD_TASK_ID', async () => {
    const client = new GatewayClient({
      url: g.server.url,
      key: KEYS.agent,
      taskId: 'tsk_01JABCDEFGHJKMNPQRSTVWXYZ0',
    });
    expect(
      await client.reportProgress({ stage: 'failed', summary: 'from a script', severity: 'info' }),
    ).toMatchObject({ status: 'sent' });
    const [e] = (await g.server.services.log.list({ type: 'agent.progress.reported', limit: 1000 }))
      .map((x) => x.envelope)
      .filter((x) => x.redacted_summary.summary === 'from a script');
    expect(e?.execution.task_id).toBe('tsk_01JABCDEFGHJKMNPQRSTVWXYZ0');
  });

  it('turns a gateway refusal into one clear line without the key', async () => {
    const client = new GatewayClient({ url: g.server.url, key: 'wrong-key-0123456789abcdef' });
    const err = await client
      .reportProgress({ stage: 'done', summary: 'x', severity: 'info' })
      .catch((e: Error) => e);
    expect(String(err)).toMatch(/401 unauthorized/);
    expect(String(err)).not.toContain('wrong-key');
  });

  it('runs switchboard notify: flags in, { id, status } out; a bad flag fails before any request', async () => {
    const saved = { ...process.env };
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      out.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      process.env.SWITCHBOARD_URL = g.server.url;
      process.env.SWITCHBOARD_KEY = KEYS.agent;
      await notifyCli({ stage: 'blocked', summary: 'need the prod password', severity: 'warn' });
      await expect(notifyCli({ stage: 'halfway', summary: 'x' })).rejects.toThrow(/--stage/);
      await expect(notifyCli({ stage: 'done', summary: 'x'.repeat(121) })).rejects.toThrow(/--summary/);
    } finally {
      process.stdout.write = write;
      process.env = saved;
    }
    expect(JSON.parse(out[0]!)).toMatchObject({ id: expect.stringMatching(/^evt_/), status: 'sent' });
  });
});
