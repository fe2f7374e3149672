import { AppError } from '../errors/index.js';
import { requireRole } from '../kernel/auth.js';
import { parseJsonBytes, readBody } from '../kernel/body.js';
import type { App } from '../kernel/module.js';
import { reportContext } from '../notify/context.js';
import type { ReportContext, Reporter } from '../notify/port.js';
import { recipientKeysIn } from '../notify/recipients.js';
import type { McpDeps, McpEngine } from './engine.js';
import { refusedRecipientCall } from './recipients.js';
import { isModernRequest } from './wire.js';

/**
 * Seed 000's "reject and alert" on MCP: the SDK refuses a `report_progress` or `ask_approval` whose
 * arguments name recipients before any handler of ours runs, so the call is read here, before it.
 */
async function alertOnRecipients(reporter: Reporter, body: unknown, ctx: ReportContext): Promise<void> {
  for (const msg of Array.isArray(body) ? body : [body]) {
    const call = refusedRecipientCall(msg);
    if (!call) continue;
    const keys = recipientKeysIn(call.params['arguments']);
    await reporter.recipientsRefused?.(call.params['name'] as string, keys, ctx);
  }
}

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
/**
 * MCP over Streamable HTTP at `/mcp`, in sessions (sessions.ts says why): `initialize` opens one bound
 * to the caller's key and task, so the task comes from the connection. Tool results and the progress
 * notifications of a waiting `ask_approval` travel on the POST's SSE stream. The MCP SDK (about 20 MB
 * resident) is loaded with engine.ts on the first request, not at start (issue 13, idle memory).
 * Returns what the module closes on stop.
 */
export function mountMcp(
  app: App,
  services: McpDeps,
  opts: { echo?: boolean } = {},
): { closeAll(): Promise<void> } {
  let loading: Promise<McpEngine> | undefined;
  const engine = () => (loading ??= import('./engine.js').then((m) => m.createMcpEngine(services, opts)));
  app.post('/mcp', requireRole(services.keys, 'agent'), async (c) => {
    const ctx = reportContext(c);
    const bytes = await readBody(c, services.config.server.body_limit_bytes);
    let parsedBody: unknown;
    try {
      parsedBody = parseJsonBytes(bytes);
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'invalid_json') return c.json(PARSE_ERROR, 400);
      // Nesting past 64 or a lone surrogate: JSON, but not a request we could log (envelope/json.ts).
      return c.json(
        {
          jsonrpc: '2.0',
          error: { code: -32600, message: `Invalid Request (${err.code}): ${err.message}` },
          id: null,
        },
        400,
      );
    }
    await alertOnRecipients(services.reporter, parsedBody, ctx);
    if (!c.req.header('mcp-session-id') && isModernRequest(parsedBody)) {
      return (await engine()).modern.handle(c.req.raw, ctx, parsedBody);
    }
    return (await engine()).sessions.handle(c.req.raw, ctx, parsedBody);
  });
  // DELETE ends a session. There is no standalone SSE stream to GET: the server never speaks unasked.
  app.delete('/mcp', requireRole(services.keys, 'agent'), async (c) =>
    (await engine()).sessions.handle(c.req.raw, reportContext(c), undefined),
  );
  app.get('/mcp', requireRole(services.keys, 'agent'), (c) => {
    c.header('Allow', 'POST, DELETE');
    throw new AppError(
      'method_not_allowed',
      'no standalone SSE stream here: POST requests, DELETE to end a session',
    );
  });
  return {
    async closeAll() {
      if (loading) await (await loading).sessions.closeAll();
    },
  };
}
