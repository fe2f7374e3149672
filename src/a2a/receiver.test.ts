import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import {
  DefaultPushNotificationSender,
  InMemoryPushNotificationStore,
  ServerCallContext,
} from '@a2a-js/sdk/server';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ingressModule } from '../ingress/module.js';
import { coreModule } from '../server/core-routes.js';
import { parseConfig } from '../server/config.js';
import { type RunningServer, startServer } from '../server/serve.js';
import { KEYS } from '../server/testing.js';
import { freshStore } from '../store/testing.js';
import { tasksModule } from '../tasks/module.js';
import { type A2AGateway, a2aGateway, sdkClient, userMessage, waitFor } from './testing.js';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/**
 * A receiving gateway on a port chosen before it starts: its `a2a-push` source must name its own URL
 * as the JWT audience. A trigger on `statusUpdate` pushes shows what triggers see.
 */
async function receiverGateway(port: number, source: Record<string, unknown>) {
  const store = await freshStore('sqlite');
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-rcv-'));
  const config = parseConfig({
    data_dir: dataDir,
    server: { host: '127.0.0.1', port },
    egress: { allow: ['127.0.0.1'] },
    auth: { keys: [{ name: 'ops', role: 'admin', key: KEYS.admin }] },
    sources: { orch: source },
    triggers: [
      { id: 'on-status', source: 'orch', when: 'event == "statusUpdate"', action: { type: 'notify' } },
    ],
  });
  const gateway: RunningServer = await startServer(config, {
    db: store.db,
    logger: pino({ level: 'silent' }),
    env: {},
    defaultMetrics: false,
    modules: [coreModule(), tasksModule({ runSupervisor: false }), ingressModule()],
  });
  const url = `http://127.0.0.1:${port}/v1/ingress/orch`;
  return {
    url,
    gateway,
    accepted: async () =>
      (await gateway.services.log.list({})).filter((e) => e.envelope.type === 'integration.webhook.accepted'),
    async stop() {
      await gateway.stop();
      await store.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

type Receiver = Awaited<ReturnType<typeof receiverGateway>>;

describe('the a2a-push ingress source', () => {
  let sender: A2AGateway | undefined;
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await sender?.stop();
    await receiver?.stop();
    sender = undefined;
    receiver = undefined;
  });

  it("verifies Switchboard's signed pushes against its JWKS, once per event, and triggers see the StreamResponse field", async () => {
    sender = await a2aGateway('sqlite', { config: { egress: { allow: ['127.0.0.1'] } } });
    // The audience is the receiver's own URL, so its port is chosen before it starts.
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v1/ingress/orch`;
    receiver = await receiverGateway(port, {
      type: 'a2a-push',
      jwks_url: `${sender.url}/.well-known/jwks.json`,
      audience: url,
    });
    const client = await sdkClient(sender.url);
    await client.sendMessage({
      tenant: '',
      message: userMessage('tell the orchestrator'),
      configuration: {
        returnImmediately: false,
        acceptedOutputModes: [],
        taskPushNotificationConfig: {
          tenant: '',
          id: '',
          taskId: '',
          url,
          token: '',
          authentication: undefined,
        },
      },
      metadata: undefined,
    });
    const r = receiver;
    const accepted = await waitFor(async () => {
      const a = await r.accepted();
      return a.length === 3 ? a : undefined;
    });
    expect(accepted.map((e) => (e.envelope.redacted_summary as { event?: string }).event)).toEqual([
      'statusUpdate',
      'statusUpdate',
      'statusUpdate',
    ]);
    // The trigger on `event == "statusUpdate"` admitted each push.
    await waitFor(async () => {
      const admitted = (await r.gateway.services.log.list({})).filter(
        (e) => e.envelope.type === 'integration.webhook.admitted',
      );
      return admitted.length === 3 ? true : undefined;
    });
    const rows = await sender.gateway.services.db.query<{ status: string }>({
      text: "SELECT status FROM deliveries WHERE channel_type = 'a2a-push'",
    });
    expect(rows.map((x) => x.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it("accepts the SDK's DefaultPushNotificationSender with a token, and drops a duplicate of the same state", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v1/ingress/orch`;
    receiver = await receiverGateway(port, { type: 'a2a-push', token: 'orch-token-0123456789' });
    const store = new InMemoryPushNotificationStore();
    const ctx = new ServerCallContext({ requestedVersion: '1.0' });
    await store.save('task-1', ctx, {
      tenant: '',
      id: 'c1',
      taskId: 'task-1',
      url,
      token: 'orch-token-0123456789',
      authentication: undefined,
    });
    const sdk = new DefaultPushNotificationSender(store);
    const working = {
      payload: {
        $case: 'statusUpdate' as const,
        value: {
          taskId: 'task-1',
          contextId: 'ctx-1',
          status: {
            state: TaskState.TASK_STATE_WORKING,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          metadata: {},
        },
      },
    };
    await sdk.send(working, ctx);
    await sdk.send(working, ctx);
    const r = receiver;
    await waitFor(async () => ((await r.accepted()).length === 1 ? true : undefined));
    // The SDK sends nothing to tell retries apart: the second is the same task and state, dropped.
    await new Promise((res) => setTimeout(res, 200));
    expect(await r.accepted()).toHaveLength(1);
    const bad = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/a2a+json', 'x-a2a-notification-token': 'wrong' },
      body: JSON.stringify({ statusUpdate: { taskId: 't', status: { state: 'TASK_STATE_WORKING' } } }),
    });
    expect(bad.status).toBe(401);
  });
});
