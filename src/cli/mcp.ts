import { gatewayFromEnv } from '../mcp/gateway.js';
import { serveStdio } from '../mcp/stdio.js';

/** `switchboard mcp`: the MCP server on stdio for an agent runtime to launch. */
export async function run(): Promise<void> {
  await serveStdio(gatewayFromEnv());
}
