import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth, type TestApp, testApp } from '../server/testing.js';
import { coreModule } from '../server/core-routes.js';
import { notifyModule } from './module.js';
import { recordingDeliveries } from './testing.js';
import { outboundPort } from './port.js';

const CHANNELS = {
  phone: { type: 'ntfy', url: 'https://ntfy.example', topic: 'owner' },
  pager: { type: 'ntfy', url: 'https://ntfy.example', topic: 'pager' },
  hook: { type: 'webhook', url: 'https://partner.example/hook', secret_env: 'HOOK_SECRET' },
};

describe.each(await dialects())('templates in the notifier on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  async function start(templates: Record<string, unknown>) {
    t = await testApp({
      dialect,
      modules: [coreModule(), notifyModule()],
      config: {
        channels: CHANNELS,
        routes: [{ match: 'true', channels: ['phone', 'pager', 'hook'] }],
        notify: { allowed_link_domains: ['example.com'], templates },
      },
    });
    const deliveries = recordingDeliveries();
    t.provide(outboundPort, deliveries);
    return deliveries.seen;
  }

  const report = async (summary: string) => {
    const res = await t!.app.request('/v1/progress', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('agent') },
      body: JSON.stringify({ stage: 'done', summary }),
    });
    return (await res.json()) as { status: string };
  };
  const events = async (type: string) =>
    (await t!.services.log.list({ type, limit: 100 })).map((e) => e.envelope);

  it('renders each channel with its name template, else its type template, else the built-in', async () => {
    const seen = await start({
      ntfy: { summary: 'ntfy: {{ summary }}' },
      phone: { summary: 'phone: {{ summary }}' },
    });
    expect(await report('shipped')).toMatchObject({ status: 'sent' });
    const by = Object.fromEntries(seen.map((s) => [s.destination, s.message.summary]));
    expect(by).toEqual({ phone: 'phone: shipped', pager: 'ntfy: shipped', hook: 'shipped' });
  });

  it('sends the built-in message when a template fails to render, and says so in the log', async () => {
    const seen = await start({ pager: { detail: '{% for i in (1..5000) %}xx{% endfor %}' } });
    await report('shipped');
    expect(seen.find((s) => s.destination === 'pager')?.message).toMatchObject({ summary: 'shipped' });
    const [failed] = (await events('agent.notification.suppressed')).filter(
      (e) => e.redacted_summary.reason === 'template_failed',
    );
    expect(failed?.redacted_summary).toMatchObject({
      destination: 'pager',
      template: 'notify.templates.pager.detail',
      fallback: 'builtin',
    });
  });

  it('blocks only the channel whose rendered template holds a secret', async () => {
    const seen = await start({ pager: { detail: `token sk-ant-api03-${'A1b2'.repeat(20)}` } });
    await report('shipped');
    expect(seen.map((s) => s.destination).sort()).toEqual(['hook', 'phone']);
    const [blocked] = await events('agent.notification.blocked');
    expect(blocked?.redacted_summary).toMatchObject({ reason: 'secret', destination: 'pager' });
    expect(JSON.stringify(blocked)).not.toContain('sk-ant-');
  });

  it('refuses to start with a template that does not parse, naming its key path', async () => {
    await expect(start({ ntfy: { summary: "{% include 'x' %}" } })).rejects.toThrow(
      /notify\.templates\.ntfy\.summary/,
    );
  });
});
