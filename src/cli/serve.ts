import { handleSignals, startServer } from '../server/serve.js';
import { loadCliConfig } from './context.js';

export async function run(opts: { config?: string; host?: string; port?: string }): Promise<void> {
  const loaded = loadCliConfig(opts);
  const config = loaded.config;
  if (opts.host) config.server.host = opts.host;
  if (opts.port) {
    const port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port must be a port number, got ${opts.port}`);
    config.server.port = port;
  }
  const server = await startServer(config, { configSource: loaded.source });
  handleSignals(server, config.server.shutdown_timeout_ms);
}
