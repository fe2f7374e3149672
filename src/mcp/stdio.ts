import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Gateway, type GatewayOptions } from './gateway.js';
import { buildMcpServer } from './tools.js';

/** `switchboard mcp`: a thin MCP server on stdio whose tools call the gateway over HTTP. */
export async function serveStdio(opts: GatewayOptions): Promise<void> {
  const gateway = new Gateway(opts);
  const server = buildMcpServer({
    reportProgress: (args) => gateway.reportProgress(args),
    askApproval: (args, progress, signal) => gateway.askApproval(args, progress, signal),
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // stdout belongs to the protocol: nothing else may be printed there while the server runs.
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
}
