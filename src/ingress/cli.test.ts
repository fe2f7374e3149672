import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEYS, type TestApp, testApp } from '../server/testing.js';
import { replay, replayRequest } from '../cli/ingress.js';
import { coreModule } from '../server/core-routes.js';
import { githubDelivery, githubExample, ingressHarness } from './testing.js';

describe('switchboard ingress replay', () => {
  let t: TestApp;
  afterEach(async () => t?.cleanup());

  it('refuses to run without an admin key in SWITCHBOARD_KEY', () => {
    expect(() => replayRequest('d-1', {}, {})).toThrow(/SWITCHBOARD_KEY/);
  });

  it('posts to the replay route of the configured gateway and prints the new event id', async () => {
    const h = ingressHarness([{ id: 'all', source: 'github', action: { type: 'notify' } }]);
    t = await testApp({ config: h.config, modules: [coreModule(), h.ingress] });
    const d = await githubDelivery('push', githubExample('push'), { delivery: 'cli-1' });
    await t.app.request('/v1/ingress/github', { method: 'POST', headers: d.headers, body: d.body });
    const server = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const result = await replay('cli-1', { url }, { SWITCHBOARD_KEY: KEYS.admin });
      expect(result.status).toBe('accepted');
      expect(String(write.mock.calls[0]?.[0])).toContain(result.id);
      await expect(replay('nope', { url }, { SWITCHBOARD_KEY: KEYS.admin })).rejects.toThrow(/not_found/);
      await expect(replay('cli-1', { url }, { SWITCHBOARD_KEY: KEYS.agent })).rejects.toThrow(/forbidden/);
    } finally {
      write.mockRestore();
      await new Promise((r) => server.close(r));
    }
  });
});
