import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { mcpResult, mcpToolDef } from '../reach/mcp.js';
import { Gateway, type GatewayOptions } from './gateway.js';
import { buildMcpServer, type ExtraTools } from './tools.js';
import { relayPermissions } from './channel.js';
import { isModernRequest, ModernMcp } from './modern.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ReportContext } from '../notify/port.js';
import { refusedRecipientCall } from './recipients.js';
import { ASK_AGENT_DEF, askAgentArgs, receiptResult, refusalResult } from './ask-agent.js';

/** On stdio the gateway knows the caller from the key; this names the one in-process client. */
const STDIO_CALLER: ReportContext = { principal: { name: 'stdio', role: 'agent' }, task_id: null };

/** `switchboard mcp`: a thin MCP server on stdio whose tools call the gateway over HTTP. */
export async function serveStdio(opts: GatewayOptions): Promise<void> {
  const gateway = new Gateway(opts);
  // The reach registry is read once at start (it changes only with the gateway's config).
  const listed = await gateway.tools().catch((err: unknown) => {
    process.stderr.write(`switchboard mcp: the tool registry could not be read: ${(err as Error).message}\n`);
    return [];
  });
  // `ask_agent` when the gateway runs the agents module (read once, as the registry is).
  const agents = await gateway.agentsOffered().catch((err: unknown) => {
    process.stderr.write(
      `switchboard mcp: the agent registry could not be read: ${(err as Error).message}\n`,
    );
    return false;
  });
  const extra: ExtraTools = {
    tools: [...listed.map(mcpToolDef), ...(agents ? [ASK_AGENT_DEF] : [])],
    call: async (name, args, progress, signal) => {
      if (agents && name === ASK_AGENT_DEF.name) {
        const checked = askAgentArgs(args);
        if (!checked.ok) return refusalResult(checked.refusal);
        const r = await gateway.askAgent(checked.skill, checked.input, signal);
        return r.ok ? receiptResult(r.receipt) : refusalResult(r.refusal);
      }
      return mcpResult(
        await gateway.touch(name, args, signal, (text) => void progress(text).catch(() => {})),
      );
    },
  };
  const build = () =>
    buildMcpServer(
      {
        reportProgress: (args) => gateway.reportProgress(args),
        askApproval: (args, progress, signal) => gateway.askApproval(args, progress, signal),
      },
      { extra },
    );
  const server = build();
  // Claude Code's permission prompts, relayed to the phone as approvals (channel.ts).
  relayPermissions(
    server,
    (args, signal) => gateway.askApproval(args, async () => {}, signal),
    (line) => process.stderr.write(`${line}\n`),
  );
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // 2026-07-28 clients send no initialize: a request naming that revision in `_meta` is answered
  // statelessly by the same tools (modern.ts); everything else goes to the 2025-11-25 server.
  const modern = new ModernMcp(build);
  const classic = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    const refused = refusedRecipientCall(message);
    if (refused) {
      void gateway
        .reportRefusedCall(refused)
        .catch((err: unknown) =>
          process.stderr.write(
            `switchboard mcp: a call naming recipients was refused but could not be recorded: ${(err as Error).message}\n`,
          ),
        );
    }
    if (!isModernRequest(message)) return classic?.(message);
    void modern
      .answer(STDIO_CALLER, message)
      .then((answer) => (answer ? transport.send(answer as JSONRPCMessage) : undefined))
      .catch((err: unknown) => process.stderr.write(`switchboard mcp: ${(err as Error).message}\n`));
  };
  // stdout belongs to the protocol: nothing else may be printed there while the server runs.
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
}
