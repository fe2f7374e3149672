import { AppError } from '../errors/index.js';
import { reportContext } from '../notify/context.js';
import { requireRole } from '../kernel/auth.js';
import { readBody } from '../kernel/body.js';
import type { App, Deps } from '../kernel/module.js';
import type { OptionalPort, Port } from '../kernel/port.js';
import type { Reporter } from '../notify/port.js';
import type { ApprovalService } from '../approvals/port.js';
import { askViaService } from './approval.js';
import { McpSessions } from './sessions.js';
import { buildMcpServer } from './tools.js';

type McpDeps = Deps<{ reporter: Port<Reporter>; approvals: OptionalPort<ApprovalService> }>;

/** JSON-RPC's parse error, answered before the transport sees a body it could not read. */
const PARSE_ERROR = {
  jsonrpc: '2.0',
  error: { code: -32700, message: 'Parse error: the body is not JSON' },
  id: null,
};

/**
 * MCP over Streamable HTTP at `/mcp`, in sessions (sessions.ts says why): `initialize` opens one bound
 * to the caller's key and task, so the task comes from the connection. Tool results and the progress
 * notifications of a waiting `ask_approval` travel on the POST's SSE stream. Returns the session table
 * so the module can close it on stop.
 */
export function mountMcp(app: App, services: McpDeps, opts: { echo?: boolean } = {}): McpSessions {
  const sessions = new McpSessions(
    (ctx) =>
      buildMcpServer(
        {
          reportProgress: (args) => services.reporter.report(args, ctx),
          askApproval: (args, progress, signal) =>
            askViaService(services.approvals, args, ctx, progress, signal),
        },
        opts,
      ),
    services.now,
  );
  app.post('/mcp', requireRole(services.keys, 'agent'), async (c) => {
    const ctx = reportContext(c);
    const bytes = await readBody(c, services.config.server.body_limit_bytes);
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      return c.json(PARSE_ERROR, 400);
    }
    return sessions.handle(c.req.raw, ctx, parsedBody);
  });
  // DELETE ends a session. There is no standalone SSE stream to GET: the server never speaks unasked.
  app.delete('/mcp', requireRole(services.keys, 'agent'), (c) =>
    sessions.handle(c.req.raw, reportContext(c), undefined),
  );
  app.get('/mcp', requireRole(services.keys, 'agent'), (c) => {
    c.header('Allow', 'POST, DELETE');
    throw new AppError(
      'method_not_allowed',
      'no standalone SSE stream here: POST requests, DELETE to end a session',
    );
  });
  return sessions;
}
