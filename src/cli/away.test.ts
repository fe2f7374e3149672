import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type TestApp, testApp } from '../server/testing.js';
import { coreModule } from '../server/core-routes.js';
import { signalsModule } from '../signals/module.js';
import { run } from './away.js';

describe('switchboard away on|off|status', () => {
  let t: TestApp;
  let server: ServerType;
  let url: string;
  beforeAll(async () => {
    t = await testApp({ modules: [coreModule(), signalsModule()] });
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: t.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await t?.cleanup();
  });

  const away = async (action: string, key: string | undefined = KEYS.approver, extra = {}) => {
    const lines: string[] = [];
    const env = { SWITCHBOARD_URL: url, ...(key ? { SWITCHBOARD_KEY: key } : {}) };
    const view = await run(action, { env, out: (l) => lines.push(l), ...extra });
    return { view, lines };
  };

  it('switches away on, reports it, and switches it off again', async () => {
    expect((await away('status')).lines[0]).toContain('at the desk: never switched');
    const on = await away('on');
    expect(on.view).toMatchObject({ away: true, effective: true, changed_by: 'me' });
    expect(on.lines[0]).toMatch(
      /^away: switched on by me at .*; prompts that wait for you go to your phone$/,
    );
    const off = await away('off', KEYS.admin);
    expect(off.lines[0]).toContain('are only recorded');
    expect((await away('status', KEYS.admin, { json: true })).lines[0]).toContain('"changed_by": "ops"');
  });

  it('switches one owner without touching the tenant switch', async () => {
    await away('on', KEYS.admin, { owner: 'alice' });
    expect((await away('status', KEYS.admin, { owner: 'alice' })).view.away).toBe(true);
    expect((await away('status', KEYS.admin)).view.away).toBe(false);
  });

  it('refuses an unknown action, a missing key and an agent key', async () => {
    await expect(away('maybe')).rejects.toThrow(/on, off or status/);
    await expect(away('on', '')).rejects.toThrow(/SWITCHBOARD_KEY/);
    await expect(away('on', KEYS.agent)).rejects.toThrow(/^403/);
  });

  it('says when the gateway cannot be reached', async () => {
    const lines: string[] = [];
    await expect(
      run('status', {
        env: { SWITCHBOARD_URL: 'http://127.0.0.1:1', SWITCHBOARD_KEY: 'k' },
        out: (l) => lines.push(l),
      }),
    ).rejects.toThrow(/Switchboard gateway unreachable at/);
  });
});
