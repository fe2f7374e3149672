import { afterEach, describe, expect, it } from 'vitest';
import { gateModule } from '../gate/module.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { coreModule } from '../server/core-routes.js';
import { notifyModule } from './module.js';
import { recordingDeliveries } from './testing.js';
import { outboundPort } from './port.js';

/** Issue 21 point 15: a freeze stops notifications for the frozen agent or tenant. */
describe.each(await dialects())('notifications of a frozen agent or tenant on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start() {
    t = await testApp({
      dialect,
      modules: [coreModule(), gateModule({ watch: false }), notifyModule()],
      config: {
        channels: { phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return deliveries.seen;
  }

  const admin = (path: string, body: unknown) =>
    t!.app.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('admin') },
      body: JSON.stringify(body),
    });
  const report = async (summary: string) => {
    const res = await t!.app.request('/v1/progress', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ stage: 'failed', summary }),
    });
    return ((await res.json()) as { status: string }).status;
  };

  it.each([
    ['the agent', { agent: 'bot' }],
    ['the tenant', { tenant: 'default' }],
  ])('sends nothing while %s is frozen, audits why, and sends again after the unfreeze', async (_n, who) => {
    const seen = await start();
    const tenant = t!.services.config.tenant.id;
    const scope = 'tenant' in who ? { tenant } : who;
    expect((await admin('/v1/incidents/freeze', { ...scope, reason: 'drill' })).status).toBe(200);
    expect(await report('deploy failed')).toBe('blocked');
    expect(seen).toEqual([]);
    const [suppressed] = (
      await t!.services.log.list({ type: 'agent.notification.suppressed', limit: 10 })
    ).map((e) => e.envelope);
    expect(suppressed?.redacted_summary).toMatchObject({ reason: 'frozen' });
    expect((await admin('/v1/incidents/unfreeze', scope)).status).toBe(200);
    expect(await report('deploy failed again')).toBe('sent');
    expect(seen).toHaveLength(1);
  });
});
