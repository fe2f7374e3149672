import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Context } from 'hono';
import { AppError } from '../errors/index.js';
import { reportContext } from '../notify/context.js';
import type { ProgressInput, ProgressResult, ReportContext } from '../notify/service.js';
import { requireRole } from '../server/auth.js';
import { readBody } from '../server/body.js';
import type { App, AppEnv, Services } from '../server/module.js';
import { askViaService } from './approval.js';
import { buildMcpServer } from './tools.js';

export interface McpBackend {
  report(input: ProgressInput, ctx: ReportContext): Promise<ProgressResult>;
}

/** JSON-RPC's parse error, answered before the transport sees a body it could not read. */
const PARSE_ERROR = {
  jsonrpc: '2.0',
  error: { code: -32700, message: 'Parse error: the body is not JSON' },
  id: null,
};

/**
 * MCP over Streamable HTTP at `/mcp`, stateless: each POST gets a fresh server and transport bound to
 * the caller's key, so the task comes from the connection and no session state outlives the request
 * (the SDK refuses to reuse a stateless transport). A tool that waits (`ask_approval`) answers on an
 * SSE stream, which carries its progress notifications.
 */
export function mountMcp(
  app: App,
  services: Services,
  backend: McpBackend,
  opts: { echo?: boolean } = {},
): void {
  app.post('/mcp', requireRole(services.keys, 'agent'), (c) => handle(c, services, backend, opts));
  // Stateless: no standalone SSE stream to GET and no session to DELETE; the SDK client expects 405.
  app.on(['GET', 'DELETE'], '/mcp', requireRole(services.keys, 'agent'), (c) => {
    c.header('Allow', 'POST');
    throw new AppError('method_not_allowed', 'this MCP endpoint is stateless: POST only');
  });
}

async function handle(
  c: Context<AppEnv>,
  services: Services,
  backend: McpBackend,
  opts: { echo?: boolean },
): Promise<Response> {
  const ctx = reportContext(c);
  const bytes = await readBody(c, services.config.server.body_limit_bytes);
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return c.json(PARSE_ERROR, 400);
  }
  const server = buildMcpServer(
    {
      reportProgress: (args) => backend.report(args, ctx),
      askApproval: (args, progress, signal) => askViaService(services.approvals, args, ctx, progress, signal),
    },
    opts,
  );
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw, { parsedBody });
}
