import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { ReportContext } from '../notify/port.js';
import { SERVER_INFO, SERVER_INSTRUCTIONS } from './tools.js';
import { asRecord, MODERN_KEYS, type Json, MODERN_VERSION, type RpcRequest, VERSION_KEY } from './wire.js';

export { isModernRequest, MODERN_VERSION, VERSION_KEY } from './wire.js';

/**
 * MCP 2026-07-28, the stateless revision (issue 21, point 23; wave2.md §3), on the same `/mcp` as the
 * 2025-11-25 sessions: no `initialize`, no `Mcp-Session-Id`; every request carries its protocol
 * version and the client's capabilities in `params._meta` and names itself in the `Mcp-Method` (and,
 * for a tool call, `Mcp-Name`) header; `server/discover` replaces the handshake; every result carries
 * `resultType`. The installed SDK (`@modelcontextprotocol/sdk` 1.32.2, LATEST 2025-11-25) serves no
 * 2026-07-28 request, and its split v2 packages are not installed (their core still names 2025-11-25
 * its latest), so this file speaks the revision's envelope itself and hands the method to the very
 * tool handlers the sessions use, through the SDK's in-memory transport. What must span requests (an
 * `ask_approval` wait) is a single request here, and its approval id is in the result; nothing rides
 * on a session. Pinned by modern.test.ts.
 */

/** New error codes of the revision. */
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** Methods a stateless client may call here; anything else is "method not found". */
const METHODS = new Set(['server/discover', 'tools/list', 'tools/call', 'ping']);

/** Where the caches of in-process clients are bounded (one per key and task). */
const MAX_CLIENTS = 200;

function reply(id: RpcRequest['id'], payload: { result: Json } | { error: Json }, status = 200): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, ...payload }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

const fail = (id: RpcRequest['id'], code: number, message: string, data?: Json, status = 400) =>
  reply(id, { error: { code, message, ...(data ? { data } : {}) } }, status);

/** The tool servers of each caller, reached in process; a cache, not a session (any replica can build one). */
export class ModernMcp {
  private readonly clients = new Map<string, Promise<Client>>();

  constructor(private readonly build: (ctx: ReportContext) => McpServer) {}

  /**
   * One stateless request on stdio (`switchboard mcp`): no headers to check; the JSON-RPC answer, or
   * undefined for a notification.
   */
  async answer(ctx: ReportContext, body: RpcRequest): Promise<Json | undefined> {
    const headers = new Headers({ 'mcp-method': body.method });
    const name = asRecord(body.params)?.name;
    if (typeof name === 'string') headers.set('mcp-name', name);
    const res = await this.handle(new Request('http://stdio/mcp', { method: 'POST', headers }), ctx, body);
    return res.status === 202 ? undefined : ((await res.json()) as Json);
  }

  async handle(req: Request, ctx: ReportContext, body: RpcRequest): Promise<Response> {
    const id = body.id;
    const meta = asRecord(body.params?._meta) ?? {};
    const version = meta[VERSION_KEY];
    if (version !== MODERN_VERSION) {
      return fail(id, UNSUPPORTED_PROTOCOL_VERSION, `unsupported protocol version ${String(version)}`, {
        supported: [MODERN_VERSION, LATEST_PROTOCOL_VERSION],
      });
    }
    const header = req.headers.get('mcp-protocol-version');
    if (header !== null && header !== MODERN_VERSION) {
      return fail(
        id,
        HEADER_MISMATCH,
        `MCP-Protocol-Version ${header} does not match _meta ${MODERN_VERSION}`,
      );
    }
    if (req.headers.get('mcp-method') !== body.method) {
      return fail(id, HEADER_MISMATCH, `the Mcp-Method header must name the method (${body.method})`);
    }
    const name = asRecord(body.params)?.name;
    const nameHeader = req.headers.get('mcp-name');
    if (body.method === 'tools/call' && nameHeader !== null && nameHeader !== name) {
      return fail(id, HEADER_MISMATCH, `the Mcp-Name header must name the tool (${String(name)})`);
    }
    // A notification (no id) needs no answer; nothing here acts on one.
    if (id === undefined) return new Response(null, { status: 202 });
    if (!METHODS.has(body.method))
      return fail(id, -32601, `method not found: ${body.method}`, undefined, 200);
    if (body.method === 'server/discover') return reply(id, { result: this.discover() });
    if (body.method === 'ping') return reply(id, { result: { resultType: 'complete' } });
    const client = await this.client(ctx);
    const params = { ...(body.params ?? {}) };
    const rest = Object.fromEntries(Object.entries(meta).filter(([k]) => !MODERN_KEYS.includes(k)));
    if (Object.keys(rest).length > 0) params._meta = rest;
    else delete params._meta;
    try {
      const result =
        body.method === 'tools/list'
          ? await client.listTools(params)
          : await client.callTool(params as { name: string; arguments?: Json }, undefined, {
              signal: req.signal,
              // A person deciding an approval takes minutes: the request lasts as long as the wait.
              timeout: 24 * 3600_000,
            });
      return reply(id, { result: { ...result, resultType: 'complete' } });
    } catch (err) {
      const e = err as { code?: number; message?: string };
      return fail(
        id,
        typeof e.code === 'number' ? e.code : -32603,
        e.message ?? 'internal error',
        undefined,
        200,
      );
    }
  }

  private discover(): Json {
    return {
      resultType: 'complete',
      supportedVersions: [MODERN_VERSION, LATEST_PROTOCOL_VERSION],
      capabilities: { tools: {} },
      serverInfo: SERVER_INFO,
      instructions: SERVER_INSTRUCTIONS,
    };
  }

  private client(ctx: ReportContext): Promise<Client> {
    const key = `${ctx.principal.name}\n${ctx.task_id ?? ''}`;
    let c = this.clients.get(key);
    if (!c) {
      if (this.clients.size >= MAX_CLIENTS) {
        const oldest = this.clients.keys().next().value as string;
        void this.clients
          .get(oldest)
          ?.then((x) => x.close())
          .catch(() => {});
        this.clients.delete(oldest);
      }
      c = this.connect(ctx);
      this.clients.set(key, c);
      c.catch(() => this.clients.delete(key));
    }
    return c;
  }

  private async connect(ctx: ReportContext): Promise<Client> {
    const [inner, outer] = InMemoryTransport.createLinkedPair();
    await this.build(ctx).connect(inner);
    const client = new Client({ name: 'switchboard-stateless', version: SERVER_INFO.version });
    await client.connect(outer);
    return client;
  }

  async closeAll(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((c) => c.then((x) => x.close()).catch(() => {})));
  }
}
