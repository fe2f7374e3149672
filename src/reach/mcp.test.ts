import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/index.js';
import { testEgress } from '../egress/testing.js';
import { newId } from '../envelope/index.js';
import { gateModule } from '../gate/module.js';
import { Gateway } from '../mcp/gateway.js';
import { mcpModule } from '../mcp/module.js';
import { buildMcpServer } from '../mcp/tools.js';
import { notifyModule } from '../notify/module.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { mcpResult, mcpToolDef } from './mcp.js';
import { reachModule } from './module.js';
import { ticketsSqlite } from './testing.js';

/**
 * The registry over MCP with the official SDK client: `/mcp` (Streamable HTTP, in process) and the
 * `switchboard mcp` path (the stdio server's tools call the gateway over HTTP). Memory on both stores.
 */

type Text = { type: 'text'; text: string };

describe.each(await dialects())('reach over MCP on %s', (dialect) => {
  const db = ticketsSqlite();
  const egress = testEgress(['127.0.0.1']);
  let gw: TestGateway;
  const taskKey = `sbt_${randomBytes(16).toString('hex')}`;
  const otherKey = `sbt_${randomBytes(16).toString('hex')}`;
  const taskId = newId('task');

  async function client(key: string): Promise<Client> {
    const c = new Client({ name: 'agent', version: '1' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', gw.gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return c;
  }

  beforeAll(async () => {
    gw = await testGateway({
      dialect,
      config: {
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'bot2', role: 'agent', key: KEYS.admin.replace('admin', 'agen2') },
          ],
        },
        egress: { allow: ['127.0.0.1'] },
        tools: {
          'ticket.query': {
            kind: 'sql',
            description: 'Look up tickets by status',
            input_schema: {
              type: 'object',
              required: ['status'],
              properties: {
                status: { enum: ['open', 'pending', 'closed'] },
                limit: { type: 'integer', minimum: 1, maximum: 500, default: 500 },
              },
            },
            sql: {
              database: db.path,
              query:
                'SELECT id, title, status, reporter_phone, note FROM tickets WHERE status = :status LIMIT :limit',
            },
            context: { mode: 'head_tail', keep: 5 },
            redact: ['cn_mobile', 'cn_id_card', 'bank_card', 'email'],
          },
          'ticket.close': {
            kind: 'sql',
            permission: 'write',
            input_schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
            sql: { database: db.path, query: "UPDATE tickets SET status = 'closed' WHERE id = :id" },
          },
        },
      },
      modules: [
        coreModule(),
        approvalsModule(),
        gateModule({ watch: false, sighup: false }),
        notifyModule(),
        mcpModule(),
        reachModule({ egress, env: {} }),
      ],
    });
    gw.gateway.services.keys.add(taskKey, { name: `task:${taskId}`, role: 'agent', task_id: taskId });
    gw.gateway.services.keys.add(otherKey, { name: 'task:other', role: 'agent', task_id: newId('task') });
  });
  afterAll(async () => {
    await gw?.stop();
    await egress.close();
    db.cleanup();
  });

  it('lists every registry tool with its schema, description and annotations, beside the built-in ones', async () => {
    const c = await client(KEYS.agent);
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'report_progress',
        'ask_approval',
        'ticket.query',
        'ticket.close',
        'memory_write',
        'memory_read',
        'memory_search',
      ]),
    );
    const q = tools.find((t) => t.name === 'ticket.query')!;
    expect(q.description).toBe('Look up tickets by status');
    expect(q.inputSchema).toMatchObject({
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: { status: { enum: ['open', 'pending', 'closed'] } },
    });
    expect(q.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === 'ticket.close')!.annotations).toMatchObject({ readOnlyHint: false });
    await c.close();
  });

  it('returns the processed result as structuredContent and text: 400 rows → head and tail, PII gone', async () => {
    const c = await client(KEYS.agent);
    const r = await c.callTool({ name: 'ticket.query', arguments: { status: 'open' } });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as { total: number; omitted: number; head: unknown[] };
    expect(s.total).toBe(134);
    expect(s.omitted).toBe(124);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toContain('… 124 of 134 items left out …');
    expect(JSON.stringify(r)).not.toMatch(/1[3-9]\d{9}/);
    await c.close();
  });

  it('answers wrong types and unknown fields with INVALID_PARAMS naming the path', async () => {
    const c = await client(KEYS.agent);
    const r = await c.callTool({ name: 'ticket.query', arguments: { status: ['open'], colour: 'red' } });
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toMatch(/^INVALID_PARAMS: ticket\.query: /);
    expect(text).toContain(
      'params.status must be one of "open", "pending", "closed"; you sent an array of 1 item',
    );
    expect(text).toContain('params.colour is not a parameter of this tool');
    await c.close();
  });

  it('keeps working memory per task, short-term touches, and long-term search scoped to the owner', async () => {
    const c = await client(taskKey);
    await c.callTool({ name: 'ticket.query', arguments: { status: 'closed', limit: 2 } });
    const w = await c.callTool({
      name: 'memory_write',
      arguments: { key: 'printer.floor', value: { floor: 3, vendor: 'Brother', note: '打印机坏了' } },
    });
    expect(w.isError).toBeFalsy();
    const read = await c.callTool({ name: 'memory_read', arguments: {} });
    const m = read.structuredContent as {
      notes: Record<string, unknown>;
      recent: { tool: string; summary: string }[];
    };
    expect(m.notes['printer.floor']).toEqual({ floor: 3, vendor: 'Brother', note: '打印机坏了' });
    expect(m.recent[0]!.tool).toBe('ticket.query');
    expect(m.recent[0]!.summary).toContain('ticket.query → ok');
    for (const q of ['brother', 'Brother floor', '打印机']) {
      const found = await c.callTool({ name: 'memory_search', arguments: { query: q } });
      const results = (found.structuredContent as { results: { key: string }[] }).results;
      expect(results.map((x) => x.key)).toContain('printer.floor');
    }
    const none = await c.callTool({ name: 'memory_search', arguments: { query: 'brother elevator' } });
    expect((none.structuredContent as { results: unknown[] }).results).toEqual([]);
    await c.close();

    const other = await client(otherKey);
    const theirs = await other.callTool({ name: 'memory_search', arguments: { query: 'brother' } });
    expect((theirs.structuredContent as { results: unknown[] }).results).toEqual([]);
    const theirNotes = await other.callTool({ name: 'memory_read', arguments: {} });
    expect((theirNotes.structuredContent as { notes: object }).notes).toEqual({});
    await other.close();
  });

  it('archives touches past the short-term five into long-term memory', async () => {
    const c = await client(taskKey);
    for (let i = 0; i < 6; i++)
      await c.callTool({ name: 'ticket.query', arguments: { status: 'pending', limit: 1 + i } });
    const read = await c.callTool({ name: 'memory_read', arguments: {} });
    expect((read.structuredContent as { recent: unknown[] }).recent).toHaveLength(5);
    const found = await c.callTool({ name: 'memory_search', arguments: { query: 'ticket query closed' } });
    const results = (found.structuredContent as { results: { kind: string }[] }).results;
    expect(results.some((x) => x.kind === 'touch')).toBe(true);
    await c.close();
  });

  it('serves the same tools through the switchboard mcp path (tools read and called over HTTP)', async () => {
    const gateway = new Gateway({ url: gw.gateway.url, key: KEYS.agent });
    const listed = await gateway.tools();
    const server = buildMcpServer(
      {
        reportProgress: () => Promise.reject(new Error('unused')),
        askApproval: () => Promise.reject(new Error('unused')),
      },
      {
        extra: {
          tools: listed.map(mcpToolDef),
          call: async (name, args) => mcpResult(await gateway.touch(name, args)),
        },
      },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const c = new Client({ name: 'agent', version: '1' });
    await c.connect(b);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('ticket.query');
    const r = await c.callTool({ name: 'ticket.query', arguments: { status: 'open', limit: 2 } });
    expect((r.structuredContent as { result: unknown[] }).result).toHaveLength(2);
    const typo = await c.callTool({ name: 'ticket.query', arguments: { status: 'shut' } });
    expect((typo.content as Text[])[0]!.text).toMatch(/^INVALID_PARAMS/);
    await c.close();
    await server.close();
  });
});
