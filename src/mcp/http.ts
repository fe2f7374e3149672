import {
  ASK_AGENT_DESCRIPTION,
  type AgentsService,
  askAgentSchema,
  collaborationSchema,
} from '../agents/port.js';
import { AppError } from '../errors/index.js';
import { reportContext } from '../notify/context.js';
import { recipientKeysIn } from '../notify/recipients.js';
import { refusedRecipientCall } from './recipients.js';
import { requireRole } from '../kernel/auth.js';
import { parseJsonBytes, readBody } from '../kernel/body.js';
import type { App, Deps } from '../kernel/module.js';
import type { OptionalPort, Port } from '../kernel/port.js';
import type { ReportContext, Reporter } from '../notify/port.js';
import type { ApprovalService } from '../approvals/port.js';
import { mcpResult, mcpToolDef } from '../reach/mcp.js';
import type { ReachService } from '../reach/port.js';
import { askViaService } from './approval.js';
import { McpSessions } from './sessions.js';
import { isModernRequest, ModernMcp } from './modern.js';
import { buildMcpServer, type ExtraTools } from './tools.js';

type McpDeps = Deps<{
  reporter: Port<Reporter>;
  approvals: OptionalPort<ApprovalService>;
  reach: OptionalPort<ReachService>;
  agents: OptionalPort<AgentsService>;
}>;

/** `ask_agent { skill, input }` (CONTRACT.md) as a tool definition: the agents module's collaboration. */
const ASK_AGENT_DEF = {
  name: 'ask_agent',
  description: ASK_AGENT_DESCRIPTION,
  inputSchema: {
    type: 'object',
    properties: {
      skill: { type: 'string', minLength: 1, description: 'The skill to ask for' },
      input: { description: 'What the other agent should work on: text, or any JSON value' },
    },
    required: ['skill', 'input'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
} as const;

/** The receipt as a tool result; a refusal (no agent, a cycle, the policy) is `isError` with its code first. */
async function askAgent(
  agents: AgentsService,
  args: Record<string, unknown>,
  ctx: ReturnType<typeof reportContext>,
) {
  const parsed = askAgentSchema.safeParse(args);
  if (!parsed.success)
    return {
      isError: true,
      content: [
        {
          type: 'text' as const,
          text: `INVALID_PARAMS: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`,
        },
      ],
    };
  try {
    const receipt = await agents.collaborate(collaborationSchema.parse(parsed.data), ctx.principal);
    return {
      ...(receipt.state === 'completed' ? {} : { isError: true }),
      content: [{ type: 'text' as const, text: JSON.stringify(receipt) }],
      structuredContent: receipt as unknown as Record<string, unknown>,
    };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return {
      isError: true,
      content: [{ type: 'text' as const, text: `${err.code}: ${err.message}` }],
      structuredContent: { error: { code: err.code, message: err.message, details: err.details ?? null } },
    };
  }
}

/**
 * The reach registry as MCP tools, calls in process: the connection's key and task are the caller,
 * the call waits for the result whatever the tool's channel, partial lines go out as progress.
 */
function reachTools(services: McpDeps): (ctx: ReturnType<typeof reportContext>) => ExtraTools | undefined {
  let defs: ExtraTools['tools'] | undefined;
  return (ctx) => {
    const reach = services.reach;
    const agents = services.agents;
    if (!reach && !agents) return undefined;
    defs ??= [...(reach?.list().map(mcpToolDef) ?? []), ...(agents ? [ASK_AGENT_DEF] : [])];
    const caller = {
      principal: ctx.principal,
      task_id: ctx.task_id,
      ...(ctx.session_id ? { session_id: ctx.session_id } : {}),
    };
    return {
      tools: defs,
      async call(name, args, progress) {
        if (agents && name === ASK_AGENT_DEF.name) return askAgent(agents, args, ctx);
        if (!reach) throw new Error(`no tool ${name}`);
        const r = await reach.touch({ tool_name: name, params: args }, caller, {
          wait: true,
          onPartial: (text) => void progress(text).catch(() => {}),
        });
        return mcpResult(r);
      },
    };
  };
}

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
export function mountMcp(app: App, services: McpDeps, opts: { echo?: boolean } = {}): McpSessions {
  const extra = reachTools(services);
  const build = (ctx: ReturnType<typeof reportContext>) => {
    const tools = extra(ctx);
    return buildMcpServer(
      {
        reportProgress: (args) => services.reporter.report(args, ctx),
        askApproval: (args, progress, signal) =>
          askViaService(services.approvals, args, ctx, progress, signal),
      },
      { ...opts, ...(tools ? { extra: tools } : {}) },
    );
  };
  const sessions = new McpSessions(build, services.now);
  // 2026-07-28 clients, stateless, on the same endpoint (modern.ts); 2025-11-25 clients keep their sessions.
  const modern = new ModernMcp(build);
  sessions.onClose(() => modern.closeAll());
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
      return modern.handle(c.req.raw, ctx, parsedBody);
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
