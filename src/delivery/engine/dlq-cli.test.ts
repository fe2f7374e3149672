import { afterEach, describe, expect, it } from 'vitest';
import { KEYS } from '../../server/testing.js';
import { list, replay } from '../../cli/dlq.js';
import { type Harness, harness, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../testing.js';

describe('switchboard dlq', () => {
  let h: Harness;
  let rx: ScriptedReceiver;
  afterEach(async () => {
    await h?.cleanup();
    await rx?.close();
  });

  it('lists dead deliveries and replays them by id over the admin API', async () => {
    rx = await startScriptedReceiver({ secret: SECRET });
    rx.script = () => ({ kind: 'answer', status: 404 });
    h = await harness({
      dialect: 'sqlite',
      channels: { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } },
    });
    const { id } = await h.enqueue('hook');
    await h.drain();
    const lines: string[] = [];
    const ctx = {
      env: { SWITCHBOARD_URL: 'http://sb.test/', SWITCHBOARD_KEY: KEYS.admin },
      fetch: ((url: string, init?: RequestInit) => h.app.request(url, init)) as typeof fetch,
      out: (l: string) => lines.push(l),
    };
    const dead = await list(ctx);
    expect(dead.map((d) => d.id)).toEqual([id]);
    expect(lines[0]).toContain(`${id}\thook\tdead\tattempts=1\t404`);
    rx.script = () => ({ kind: 'answer', status: 200 });
    const result = await replay({ ...ctx, id: [id] });
    expect(result).toEqual({ replayed: [id], refused: [] });
    expect(lines.at(-1)).toBe('replayed 1');
    await h.drain();
    expect((await h.rows())[0]?.status).toBe('succeeded');
  });

  it('says what is wrong: no key, a refused replay, nothing named', async () => {
    rx = await startScriptedReceiver();
    h = await harness({ dialect: 'sqlite', channels: {} });
    const fetchApp = ((url: string, init?: RequestInit) => h.app.request(url, init)) as typeof fetch;
    await expect(list({ env: {}, fetch: fetchApp })).rejects.toThrow('set SWITCHBOARD_KEY');
    const ctx = { env: { SWITCHBOARD_KEY: KEYS.admin }, fetch: fetchApp, out: () => {} };
    await expect(replay(ctx)).rejects.toThrow('name what to replay');
    await expect(replay({ ...ctx, id: ['dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ'] })).rejects.toThrow(
      '409 conflict: nothing was replayed: dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ: no such delivery',
    );
    await expect(list({ ...ctx, env: { SWITCHBOARD_KEY: KEYS.agent } })).rejects.toThrow('403 forbidden');
  });
});
