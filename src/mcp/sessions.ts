import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ReportContext } from '../notify/port.js';

/** An agent's turns are minutes apart, not hours: a session idle this long is closed. */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;
/** Bounds memory when clients never send DELETE: the least recently used session goes first. */
export const MCP_MAX_SESSIONS = 1000;

interface Session {
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  /** The key (and task) that opened the session: every later request must come from the same. */
  owner: string;
  lastUsed: number;
}

function ownerOf(ctx: ReportContext): string {
  return `${ctx.principal.name}\n${ctx.task_id ?? ''}`;
}

function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * Stateful Streamable HTTP: one MCP server per session, created by `initialize` and bound to the key
 * (and task) that opened it. Building a server and transport per request (stateless mode) costs about
 * ten times the tool call itself (docs/notify.md, bench), so sessions are kept in memory; on another
 * replica a session id is unknown and answers 404, which tells a client to initialize again.
 */
export class McpSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly build: (ctx: ReportContext) => McpServer,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  async handle(req: Request, ctx: ReportContext, parsedBody: unknown): Promise<Response> {
    const id = req.headers.get('mcp-session-id');
    if (!id) {
      if (req.method !== 'POST' || !isInitializeRequest(parsedBody)) {
        return rpcError(400, -32000, 'Bad Request: no Mcp-Session-Id; send initialize first');
      }
      return this.open(req, ctx, parsedBody);
    }
    const s = this.sessions.get(id);
    // Someone else's session id is answered like an unknown one: it says nothing about who holds it.
    if (!s || s.owner !== ownerOf(ctx)) return rpcError(404, -32001, 'Session not found');
    s.lastUsed = this.now();
    return s.transport.handleRequest(req, { parsedBody });
  }

  private async open(req: Request, ctx: ReportContext, parsedBody: unknown): Promise<Response> {
    this.sweep();
    const server = this.build(ctx);
    const session: Omit<Session, 'transport'> & { transport?: WebStandardStreamableHTTPServerTransport } = {
      server,
      owner: ownerOf(ctx),
      lastUsed: this.now(),
    };
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        this.sessions.set(sid, { ...session, transport });
      },
      onsessionclosed: (sid) => {
        this.sessions.delete(sid);
      },
    });
    session.transport = transport;
    await server.connect(transport);
    return transport.handleRequest(req, { parsedBody });
  }

  /** Closes idle sessions, and the least recently used ones beyond the cap. */
  sweep(): void {
    const now = this.now();
    const byAge = [...this.sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    let excess = this.sessions.size - MCP_MAX_SESSIONS + 1;
    for (const [sid, s] of byAge) {
      if (now - s.lastUsed <= MCP_SESSION_IDLE_MS && excess <= 0) break;
      excess -= 1;
      this.sessions.delete(sid);
      void s.server.close().catch(() => {});
    }
  }

  private readonly closers: (() => Promise<void>)[] = [];

  /** Also run on `closeAll` (the stateless revision's in-process clients). */
  onClose(close: () => Promise<void>): void {
    this.closers.push(close);
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close().catch(() => {})));
    await Promise.all(this.closers.map((c) => c().catch(() => {})));
  }
}
