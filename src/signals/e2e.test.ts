import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { approvalsModule } from '../approvals/module.js';
import { type NtfyAction, type NtfyStandIn, ntfyStandIn } from '../channels/ntfy/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { notifyModule } from '../notify/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { coreModule } from '../server/core-routes.js';
import type { RunningServer } from '../server/serve.js';
import { signalsModule } from './module.js';

const fixture = (name: string, patch: Record<string, unknown> = {}) =>
  JSON.stringify({
    ...JSON.parse(
      readFileSync(new URL(`../runtimes/claude-code/fixtures/${name}.json`, import.meta.url), 'utf8'),
    ),
    ...patch,
  });

async function until<T>(fn: () => T | undefined, ms = 10_000): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(await dialects())('Claude Code signals to a local ntfy, on %s', (dialect) => {
  let receiver: NtfyStandIn;
  let gw: TestGateway;
  let gateway: RunningServer;

  beforeAll(async () => {
    receiver = await ntfyStandIn();
    const notify = notifyModule();
    gw = await testGateway({
      dialect,
      config: {
        server: { public_url: 'http://127.0.0.1:9' },
        signals: { permissions: { wait_seconds: 2 } },
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
          ],
        },
        channels: { phone: { type: 'ntfy', url: receiver.url, topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        egress: { allow: ['127.0.0.1'] },
      },
      modules: [
        coreModule(),
        deliveryModule({ env: {} }),
        approvalsModule(),
        gateModule(),
        runtimesModule(),
        notify,
        signalsModule(),
      ],
    });
    gateway = gw.gateway;
  });
  afterAll(async () => {
    await gw?.stop();
    await receiver?.close();
  });

  const hook = (body: string) =>
    fetch(`${gateway.url}/v1/runtimes/claude-code/hooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
      body,
    });

  it('pushes a finished turn, and a permission prompt only once the owner is away', async () => {
    expect((await hook(fixture('Stop'))).status).toBe(200);
    const done = await until(() =>
      receiver.published.find((p) => p.message?.includes('completed the refactoring')),
    );
    expect(done?.title).toContain('bot:my-project');

    expect((await hook(fixture('Notification', { session_id: 'desk' }))).status).toBe(200);
    // The relay handles it after the hook has answered; switch away only once it has.
    let recorded = false;
    await until(() => {
      void gateway.services.log.list({ type: 'agent.notification.suppressed', limit: 10 }).then((rows) => {
        recorded = rows.some((r) => r.envelope.redacted_summary.reason === 'owner_not_away');
      });
      return recorded ? true : undefined;
    });
    expect(recorded).toBe(true);
    const on = await fetch(`${gateway.url}/v1/away`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.approver}` },
      body: JSON.stringify({ away: true }),
    });
    expect(on.status).toBe(200);
    expect((await hook(fixture('Notification', { session_id: 'phone' }))).status).toBe(200);
    const prompt = await until(() => receiver.published.find((p) => p.message?.includes('session: phone')));
    expect(prompt?.message).toContain('Claude needs your permission to use Bash');
    // The one sent while at the desk was only recorded.
    expect(receiver.published.some((p) => p.message?.includes('session: desk'))).toBe(false);
    expect(receiver.published).toHaveLength(2);
  }, 30_000);

  /** Presses a button the way the ntfy app does: the action's own request, at the gateway's address. */
  const press = (action: NtfyAction) =>
    fetch(String(action.url).replace('http://127.0.0.1:9', gateway.url), {
      method: action.method ?? 'POST',
      headers: action.headers ?? {},
      ...(action.body !== undefined ? { body: action.body } : {}),
    });

  it('a PermissionRequest while away: buttons on the phone, Approve pressed, the hook allows', async () => {
    await away(true);
    const held = hook(
      fixture('PermissionRequest', { session_id: 'tap', tool_input: { command: 'make deploy' } }),
    );
    const prompt = await until(() =>
      receiver.published.find((p) => p.message?.includes('Bash: make deploy')),
    );
    expect(prompt?.message).toContain('session: tap');
    const approve = prompt?.actions?.find((a) => a.label === 'Approve');
    expect(approve?.action).toBe('http');
    expect((await press(approve!)).status).toBe(200);
    expect(await (await held).json()).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
  }, 30_000);

  it('the same with no press: no decision after the wait, then the phone hears it expired', async () => {
    await away(true);
    const res = await hook(
      fixture('PermissionRequest', { session_id: 'nopress', tool_input: { command: 'make nopress' } }),
    );
    expect(await res.json()).toEqual({});
    const prompt = receiver.published.find((p) => p.message?.includes('Bash: make nopress'));
    expect(prompt?.actions?.some((a) => a.label === 'Approve')).toBe(true);
    const told = await until(
      () =>
        receiver.published.find(
          (p) => p.message?.includes('waiting at the desk') && p.message.includes('session: nopress'),
        ),
      15_000,
    );
    expect(told?.priority).toBeGreaterThanOrEqual(4);
  }, 30_000);

  async function away(on: boolean) {
    const res = await fetch(`${gateway.url}/v1/away`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.approver}` },
      body: JSON.stringify({ away: on }),
    });
    expect(res.status).toBe(200);
  }
});
