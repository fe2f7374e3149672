import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { approvalsModule } from '../approvals/index.js';
import { parseConfig } from '../server/config.js';
import { notifyModule } from '../notify/module.js';
import { mcpModule } from './module.js';
import { type Enqueued, recordingDeliveries } from '../notify/testing.js';
import { coreModule } from '../server/core-routes.js';
import { type RunningServer, startServer } from '../server/serve.js';
import type { Db } from '../store/port.js';
import { outboundPort } from '../notify/port.js';

/** A real gateway on port 0 (core, approvals, notify) with a recording delivery port, for MCP tests. */
export interface Gateway {
  server: RunningServer;
  seen: Enqueued[];
  cleanup(): Promise<void>;
}

export async function startGateway(db: Db, keys: { agent: string; approver: string }): Promise<Gateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-mcp-'));
  const config = parseConfig({
    data_dir: dataDir,
    server: { port: 0, public_url: 'https://switchboard.example' },
    auth: {
      keys: [
        { name: 'bot', role: 'agent', key: keys.agent },
        { name: 'me', role: 'approver', key: keys.approver },
      ],
    },
    channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
    routes: [{ match: 'true', channels: ['phone'] }],
    notify: { progress_merge_window_seconds: 0 },
  });
  const server = await startServer(config, {
    db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    modules: [coreModule(), approvalsModule(), notifyModule(), mcpModule()],
  });
  const deliveries = recordingDeliveries();
  server.kernel.ports.set(outboundPort, deliveries);
  return {
    server,
    seen: deliveries.seen,
    async cleanup() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
