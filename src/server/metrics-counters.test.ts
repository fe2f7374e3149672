import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { testApp, type TestApp } from './testing.js';

/** The value of one unlabelled series in a Prometheus text page. */
function value(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  if (!m) throw new Error(`${name} is not on the page`);
  return Number(m[1]);
}

describe.each(await dialects())('store and relay counters in /metrics (%s)', (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.cleanup();
  });

  it('exports the store commits, transactions and statements and the relay claims and acks as counters', async () => {
    t = await testApp({ dialect });
    const first = await (await t.app.request('/metrics')).text();
    await t.services.log.append({ type: 'agent.tool.requested' });
    await t.services.relay.drain();
    const text = await (await t.app.request('/metrics')).text();
    for (const name of [
      'switchboard_store_commits_total',
      'switchboard_store_transactions_total',
      'switchboard_store_statements_total',
      'switchboard_relay_claims_total',
      'switchboard_relay_acked_rows_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} counter`);
      expect(value(text, name)).toBeGreaterThan(value(first, name));
    }
    const stats = t.services.db.stats!();
    // The page is read before the scrape's own statements counted, so it lags the store by at most that scrape.
    expect(value(text, 'switchboard_store_commits_total')).toBeLessThanOrEqual(stats.commits);
    expect(value(text, 'switchboard_relay_claims_total')).toBe(t.services.relay.stats().claims);
    expect(value(text, 'switchboard_relay_acked_rows_total')).toBeGreaterThanOrEqual(1);
  });
});
