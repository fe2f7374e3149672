import { afterEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../../envelope/index.js';
import { coreModule } from '../../server/core-routes.js';
import { type TestApp, testApp } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { tasksPort } from '../../tasks/port.js';
import { FakeTasks, githubDelivery, githubExample, ingressHarness } from '../testing.js';
import { DEFAULT_MAX_HOPS } from './config.js';
import { depthMarker } from './loop.js';

const COMMENT_TRIGGER = {
  id: 'comment',
  source: 'github',
  when: 'event.name == "issue_comment"',
  action: { type: 'notify' },
};

/** Issue 20 point 3: the hop count is limited as depth is (`loop.max_hops`), carried by the marker. */
describe.each(await dialects())('the hop limit on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.cleanup());

  async function start(loop?: { max_hops: number }) {
    const h = ingressHarness([COMMENT_TRIGGER], loop ? { loop } : {});
    t = await testApp({ dialect, config: h.config, modules: [coreModule(), h.ingress] });
    t.provide(tasksPort, new FakeTasks());
  }
  const events = async (type: string): Promise<Envelope[]> =>
    (await t.services.log.list({ type, limit: 1000 })).map((e) => e.envelope);
  async function comment(marker: string): Promise<void> {
    const p = githubExample('issue_comment', 'created');
    (p.comment as Record<string, unknown>).body = `Done.\n${marker}`;
    const d = await githubDelivery('issue_comment', p);
    const res = await t.app.request('/v1/ingress/github', {
      method: 'POST',
      headers: d.headers,
      body: d.body,
    });
    expect(res.status).toBe(202);
    await t.services.relay.drain();
  }

  it('drops a comment whose marker carries the default hop limit, admits one below it', {
    timeout: 60_000,
  }, async () => {
    await start();
    await comment(depthMarker(1, DEFAULT_MAX_HOPS - 1));
    await comment(depthMarker(1, DEFAULT_MAX_HOPS));
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({
      trigger: 'comment',
      reason: 'hop_limit',
      hops: DEFAULT_MAX_HOPS,
      limit: DEFAULT_MAX_HOPS,
    });
    const accepted = await events('integration.webhook.accepted');
    expect(accepted.map((e) => e.lineage.hop_count)).toEqual([DEFAULT_MAX_HOPS - 1, DEFAULT_MAX_HOPS]);
  });

  it('takes loop.max_hops from config, and a marker without hops= counts none', async () => {
    await start({ max_hops: 2 });
    await comment(depthMarker(1));
    await comment(depthMarker(0, 2));
    expect(await events('integration.webhook.admitted')).toHaveLength(1);
    const [dropped] = await events('integration.webhook.dropped');
    expect(dropped?.redacted_summary).toMatchObject({ reason: 'hop_limit', hops: 2, limit: 2 });
  });
});
