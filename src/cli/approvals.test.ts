import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS } from '../server/testing.js';
import { type ApprovalsHarness, approvalsHarness } from '../approvals/testing.js';
import { approve, list, reject } from './approvals.js';

describe('switchboard approvals list|approve|reject', () => {
  let h: ApprovalsHarness;
  let server: ServerType;
  let url: string;
  beforeAll(async () => {
    h = await approvalsHarness('sqlite', { realClock: true });
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: h.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await h?.cleanup();
  });

  const run = async (
    fn: (opts: Parameters<typeof list>[0]) => Promise<void>,
    key: string | undefined,
    extra = {},
  ) => {
    const lines: string[] = [];
    const env = { SWITCHBOARD_URL: url, ...(key ? { SWITCHBOARD_KEY: key } : {}) };
    await fn({ env, out: (l) => lines.push(l), ...extra });
    return lines;
  };
  const newId = async () =>
    ((await (await h.ask({ action: 'deploy', reason: 'r' })).json()) as { id: string }).id;

  it('lists pending approvals one per line, then approves and rejects them', async () => {
    const a = await newId();
    const b = await newId();
    const lines = await run(list, KEYS.approver);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${b}  pending  bot  expires .*"deploy"$`));
    const approved = await run((o) => approve(a, o), KEYS.approver, { comment: 'ok' });
    expect(approved[0]).toMatch(new RegExp(`^${a}  approved  bot  by me  "deploy"`));
    await run((o) => reject(b, o), KEYS.admin);
    expect(await run(list, KEYS.approver)).toEqual(['no pending approvals']);
    expect(await run(list, KEYS.approver, { state: 'all' })).toHaveLength(2);
  });

  it('fails with one clear line for a missing or wrong key', async () => {
    await expect(run(list, undefined)).rejects.toThrow(/^no key for the gateway: set SWITCHBOARD_KEY/);
    await expect(run(list, 'not-a-key')).rejects.toThrow('refused the key (401)');
  });

  it('fails with one clear line for an agent key, a decided approval and a bad id', async () => {
    const a = await newId();
    await expect(run((o) => approve(a, o), KEYS.agent)).rejects.toThrow(
      'an agent key cannot decide approvals',
    );
    await run((o) => approve(a, o), KEYS.approver);
    await expect(run((o) => reject(a, o), KEYS.approver)).rejects.toThrow(
      /already approved \(already_decided\)/,
    );
    await expect(run((o) => approve('nope', o), KEYS.approver)).rejects.toThrow(
      '"nope" is not an approval id',
    );
    await expect(run(list, KEYS.approver, { state: 'done' })).rejects.toThrow(/state.*\(bad_request\)/);
  });

  it('says where it could not reach the gateway', async () => {
    const lines: string[] = [];
    const env = { SWITCHBOARD_URL: 'http://127.0.0.1:1', SWITCHBOARD_KEY: KEYS.approver };
    await expect(list({ env, out: (l) => lines.push(l) })).rejects.toThrow(
      /Switchboard gateway unreachable at http:\/\/127.0.0.1:1/,
    );
  });
});
