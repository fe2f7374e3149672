import { agentsPort } from '../agents/port.js';
import { approvalsPort } from '../approvals/port.js';
import { defineModule } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { reporterPort } from '../notify/port.js';
import { reachPort } from '../reach/port.js';
import { mountMcp } from './http.js';

export interface McpModuleOptions {
  /** Also serve a bare `echo` tool at /mcp: the bench's baseline on the same server and transport. */
  echoTool?: boolean;
}

const requires = {
  reporter: reporterPort,
  approvals: optional(approvalsPort),
  reach: optional(reachPort),
  agents: optional(agentsPort),
};

/**
 * MCP over Streamable HTTP at `/mcp`: `report_progress` through notify's reporter, `ask_approval`
 * through approvals (an MCP client without the approvals module gets a clear tool error), and every
 * reach registry tool and memory tool when the reach module runs, and `ask_agent` when the agents
 * module runs.
 */
export function mcpModule(opts: McpModuleOptions = {}) {
  let sessions: ReturnType<typeof mountMcp> | undefined;
  return defineModule({
    name: 'mcp',
    requires,
    routes(app, deps) {
      sessions = mountMcp(app, deps, { echo: opts.echoTool === true });
    },
    async stop() {
      await sessions?.closeAll();
    },
  });
}
