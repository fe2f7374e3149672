import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS } from '../server/testing.js';
import { type GateHarness, gateHarness } from '../gate/service/testing.js';
import { freeze, list, revoke, unfreeze } from './incidents.js';

describe('switchboard incidents over HTTP', () => {
  let h: GateHarness;
  let server: ReturnType<typeof serve>;
  let url: string;
  const lines: string[] = [];
  const opts = (extra: Record<string, string> = {}, key: string = KEYS.admin) => ({
    url,
    env: { SWITCHBOARD_KEY: key },
    out: (l: string) => lines.push(l),
    ...extra,
  });

  beforeAll(async () => {
    h = await gateHarness('sqlite');
    await new Promise<void>((ready) => {
      server = serve({ fetch: h.t.app.fetch, hostname: '127.0.0.1', port: 0 }, () => ready());
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await h.cleanup();
  });

  it('freezes, lists, unfreezes and revokes, one line each', async () => {
    await freeze(opts({ agent: 'bot', reason: 'incident 7' }));
    await freeze(opts({ agent: 'bot' }));
    await list(opts());
    await unfreeze(opts({ agent: 'bot' }));
    await revoke(opts({ task: 'tsk_01JB0000000000000000000000' }));
    expect(lines[0]).toBe('agent bot frozen');
    expect(lines[1]).toBe('agent bot was already frozen');
    expect(lines[2]).toMatch(/^frozen agent bot since .* by ops: incident 7$/);
    expect(lines[3]).toBe('agent bot unfrozen');
    expect(lines[4]).toMatch(
      /^revoked every capability of task tsk_01JB0000000000000000000000 issued up to .* \(rvk_/,
    );
  });

  it('says what is wrong: two scopes, an agent key, no key, no gateway', async () => {
    await expect(freeze(opts({ agent: 'a', tenant: 'b' }))).rejects.toThrow(
      'name exactly one of --agent, --tenant',
    );
    await expect(freeze(opts({ agent: 'a' }, KEYS.agent))).rejects.toThrow('needs an admin key');
    await expect(freeze({ ...opts({ agent: 'a' }), env: {} })).rejects.toThrow('no key for the gateway');
    await expect(revoke(opts({ task: 'nope' }))).rejects.toThrow(/validation_failed/);
    await expect(freeze({ ...opts({ agent: 'a' }), url: 'http://127.0.0.1:1' })).rejects.toThrow(
      /Switchboard gateway unreachable at/,
    );
  });
});
