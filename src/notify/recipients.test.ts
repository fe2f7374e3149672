import { afterEach, describe, expect, it } from 'vitest';
import { coreModule } from '../server/core-routes.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { notifyModule } from './module.js';
import { outboundPort } from './port.js';
import { recordingDeliveries } from './testing.js';

/** Seed 000 "reject and alert": a tool call naming recipients is refused, recorded, and the owner told. */
describe.each(await dialects())('recipients in report_progress on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('refuses `to` and `chat_id`, writes an audit event and sends the owner a critical alert', async () => {
    t = await testApp({
      dialect,
      modules: [coreModule(), notifyModule()],
      config: {
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    const res = await t.app.request('/v1/progress', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ stage: 'done', summary: 'sent it', to: 'boss@example.com', chat_id: '12345' }),
    });
    expect(res.status).toBe(400);
    const blocked = (await t.services.log.list({ type: 'agent.notification.blocked', limit: 10 })).map(
      (e) => e.envelope,
    );
    expect(blocked).toHaveLength(1);
    expect(blocked[0]!.redacted_summary).toEqual({
      reason: 'recipient_in_tool_call',
      keys: ['to', 'chat_id'],
    });
    expect(JSON.stringify(blocked[0])).not.toContain('boss@example.com');
    // The alert went to the owner's own route, at critical severity, naming the keys, not their values.
    await expect.poll(() => deliveries.seen.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const alert = JSON.stringify(deliveries.seen);
    expect(alert).toContain('tried to choose recipients (to, chat_id)');
    expect(alert).not.toContain('boss@example.com');
  });

  it('sends nothing for a refusal that names no recipient', async () => {
    t = await testApp({ dialect, modules: [coreModule(), notifyModule()], config: {} });
    const res = await t.app.request('/v1/progress', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ stage: 'done', summary: 'x', colour: 'red' }),
    });
    expect(res.status).toBe(400);
    expect(await t.services.log.list({ type: 'agent.notification.blocked', limit: 10 })).toEqual([]);
  });
});
