import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { approvalsModule } from '../approvals/index.js';
import { type NtfyPublish, type NtfyStandIn, ntfyStandIn } from '../channels/ntfy/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { notifyModule } from '../notify/module.js';
import { mcpModule } from './module.js';
import { coreModule } from '../server/core-routes.js';
import type { RunningServer } from '../server/serve.js';

describe.each(await dialects())('an approval from a phone, end to end, on %s', (dialect) => {
  let receiver: NtfyStandIn;
  let gw: TestGateway;
  let gateway: RunningServer;

  beforeAll(async () => {
    receiver = await ntfyStandIn();
    gw = await testGateway({
      dialect,
      config: {
        auth: { keys: [{ name: 'bot', role: 'agent', key: KEYS.agent }] },
        channels: { phone: { type: 'ntfy', url: receiver.url, topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        egress: { allow: ['127.0.0.1'] },
      },
      modules: [coreModule(), deliveryModule({ env: {} }), approvalsModule(), notifyModule(), mcpModule()],
      // Links must point where the phone (this test) can reach the gateway.
      publicUrl: true,
    });
    gateway = gw.gateway;
  });
  afterAll(async () => {
    await gw?.stop();
    await receiver?.close();
  });

  it('asks over MCP, the ntfy receiver gets approve/reject buttons, pressing approve returns approved', async () => {
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } },
      }),
    );
    const progress: number[] = [];
    const call = client.callTool(
      {
        name: 'ask_approval',
        arguments: { action: 'deploy v2 to prod', reason: 'release day', payload_json: '{"ref":"v2"}' },
      },
      undefined,
      { onprogress: (p) => progress.push(p.progress), resetTimeoutOnProgress: true, timeout: 30_000 },
    );
    const deadline = Date.now() + 15_000;
    let pushed: NtfyPublish | undefined;
    while (!pushed && Date.now() < deadline) {
      pushed = receiver.published.find((p) => p.actions?.some((a) => a.action === 'http'));
      if (!pushed) await new Promise((r) => setTimeout(r, 25));
    }
    expect(pushed).toBeDefined();
    expect(pushed?.message ?? '').toContain('deploy v2 to prod');
    const approve = pushed!.actions!.find(
      (a) => a.action === 'http' && /decision=approve/.test(a.url ?? ''),
    )!;
    const url = String(approve.url);
    expect(url.startsWith(`${gateway.url}/a/`)).toBe(true);
    // What ntfy does when the button is pressed: a POST to the action's URL, no body.
    const pressed = await fetch(url, { method: approve.method ?? 'POST' });
    expect(pressed.status).toBe(200);
    const result = await call;
    expect(result.structuredContent).toMatchObject({
      outcome: 'approved',
      approval_id: expect.stringMatching(/^apr_/),
    });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    // Pressed twice: the approval is already decided.
    expect((await fetch(url, { method: 'POST' })).status).toBe(409);
    await client.close();
  }, 30_000);

  it('delivers a progress report to the receiver through the real delivery engine', async () => {
    const res = await fetch(`${gateway.url}/v1/progress`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.agent}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stage: 'failed', summary: 'the migration failed on step 3' }),
    });
    expect(await res.json()).toMatchObject({ status: 'sent' });
    const deadline = Date.now() + 10_000;
    while (
      !receiver.published.some((p) => (p.message ?? '').includes('migration failed')) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(receiver.published.some((p) => (p.message ?? '').includes('migration failed'))).toBe(true);
  });
});
