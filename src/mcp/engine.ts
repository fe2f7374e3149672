import { type AgentsService, collaborationSchema } from '../agents/port.js';
import type { reportContext } from '../notify/context.js';
import { AppError } from '../errors/index.js';
import type { Deps } from '../kernel/module.js';
import type { OptionalPort, Port } from '../kernel/port.js';
import type { Reporter } from '../notify/port.js';
import type { ApprovalService } from '../approvals/port.js';
import { mcpResult, mcpToolDef } from '../reach/mcp.js';
import type { ReachService } from '../reach/port.js';
import { askViaService } from './approval.js';
import { ASK_AGENT_DEF, askAgentArgs, receiptResult, refusalResult } from './ask-agent.js';
import { McpSessions } from './sessions.js';
import { ModernMcp } from './modern.js';
import { buildMcpServer, type ExtraTools } from './tools.js';

export type McpDeps = Deps<{
  reporter: Port<Reporter>;
  approvals: OptionalPort<ApprovalService>;
  reach: OptionalPort<ReachService>;
  agents: OptionalPort<AgentsService>;
}>;

/** The receipt as a tool result; a refusal (no agent, a cycle, the policy) is `isError` with its code first. */
async function askAgent(
  agents: AgentsService,
  args: Record<string, unknown>,
  ctx: ReturnType<typeof reportContext>,
) {
  const checked = askAgentArgs(args);
  if (!checked.ok) return refusalResult(checked.refusal);
  try {
    const req = collaborationSchema.parse({ skill: checked.skill, input: checked.input });
    return receiptResult(await agents.collaborate(req, ctx.principal));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return refusalResult({ code: err.code, message: err.message, details: err.details ?? null });
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
 * The SDK side of `/mcp` (http.ts loads this file on the first request): the tool servers, the
 * 2025-11-25 session table and the 2026-07-28 stateless answerer.
 */
export function createMcpEngine(services: McpDeps, opts: { echo?: boolean } = {}) {
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
  return { sessions, modern };
}

export type McpEngine = ReturnType<typeof createMcpEngine>;
