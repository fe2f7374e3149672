import { afterEach, describe, expect, it } from 'vitest';
import { dead, replay } from '../cli/outbox.js';
import { Relay } from '../log/relay.js';
import { dialects } from '../store/testing.js';
import { coreModule } from './core-routes.js';
import { auth, KEYS, type TestApp, testApp, testGateway } from './testing.js';

describe.each(await dialects())('dead outbox rows on %s', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  const call = async (method: string, path: string, body?: unknown, role: 'admin' | 'agent' = 'admin') => {
    const res = await t!.app.request(path, {
      method,
      headers: { ...auth(role), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('lists a row parked after the last attempt with the failing subscriber and its version, and replays it', async () => {
    t = await testApp({ dialect, modules: [coreModule()] });
    let broken = true;
    const handled: string[] = [];
    let clock = Date.now();
    const relay = new Relay(t.services.db, t.services.log, { maxAttempts: 2, now: () => clock });
    relay.subscribe({
      name: 'test.fine',
      accepts: () => true,
      handle: async (e) => void handled.push(`fine:${e.event_id}`),
    });
    relay.subscribe({
      name: 'test.flaky',
      version: '3.1.0',
      accepts: (type) => type === 'agent.progress.reported',
      handle: async (e) => {
        if (broken) throw new Error('flaky: upstream said 500');
        handled.push(`flaky:${e.event_id}`);
      },
    });
    // The app's own relay would take the row first (and, with no subscriber failing, delete it).
    await t.services.relay.stop();
    const event = await t.services.emit({ type: 'agent.progress.reported', correlation_id: 'c1' });
    clock = Date.now(); // the row is available from its append on
    for (let i = 0; i < 2; i++) {
      await relay.runOnce();
      clock += 10 * 60_000; // past the retry's backoff
    }
    const { status, body } = await call('GET', '/v1/outbox/dead');
    expect(status).toBe(200);
    const rows = body['rows'] as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      event_id: event.event_id,
      type: 'agent.progress.reported',
      attempts: 2,
      consumer: 'test.flaky',
      consumer_version: '3.1.0',
      last_error: 'flaky: upstream said 500',
    });
    expect(handled.filter((h) => h.startsWith('fine:'))).toHaveLength(1);

    broken = false;
    const replayed = await call('POST', '/v1/outbox/replay', { ids: [rows[0]!['id']] });
    expect(replayed).toMatchObject({ status: 200, body: { replayed: [rows[0]!['id']], not_dead: [] } });
    await relay.drain();
    // The subscriber that had handled the event skips it (inbox); the fixed one handles it once.
    expect(handled).toEqual([`fine:${event.event_id}`, `flaky:${event.event_id}`]);
    expect((await call('GET', '/v1/outbox/dead')).body['rows']).toEqual([]);
    expect((await call('POST', '/v1/outbox/replay', { all: true })).body).toEqual({ replayed: [] });
  });

  it('refuses a replay that names nothing, both ways at once, rows that are not dead, or an agent key', async () => {
    t = await testApp({ dialect, modules: [coreModule()] });
    expect((await call('POST', '/v1/outbox/replay', {})).status).toBe(400);
    expect((await call('POST', '/v1/outbox/replay', { ids: [1], all: true })).status).toBe(400);
    expect((await call('POST', '/v1/outbox/replay', { ids: ['x'] })).status).toBe(400);
    expect((await call('POST', '/v1/outbox/replay', '{"ids": [1')).status).toBe(400);
    expect((await call('POST', '/v1/outbox/replay', { ids: [424242] })).status).toBe(404);
    expect((await call('GET', '/v1/outbox/dead?limit=0')).status).toBe(400);
    expect((await call('GET', '/v1/outbox/dead', undefined, 'agent')).status).toBe(403);
  });
});

describe('switchboard outbox dead|replay', () => {
  it('prints dead rows with subscriber@version and replays them by id', async () => {
    const gw = await testGateway({
      dialect: 'sqlite',
      config: { auth: { keys: [{ name: 'ops', role: 'admin', key: KEYS.admin }] } },
      modules: [coreModule()],
    });
    try {
      const env = { SWITCHBOARD_URL: gw.gateway.url, SWITCHBOARD_KEY: KEYS.admin };
      const { services } = gw.gateway;
      const relay = new Relay(services.db, services.log, { maxAttempts: 1 });
      relay.subscribe({
        name: 'test.broken',
        version: '7',
        accepts: (type) => type === 'agent.progress.reported',
        handle: async () => {
          throw new Error('boom');
        },
      });
      await services.relay.stop();
      await services.emit({ type: 'agent.progress.reported', correlation_id: 'c2' });
      await relay.runOnce();
      const lines: string[] = [];
      const rows = await dead({ env, out: (l) => lines.push(l) });
      expect(rows).toHaveLength(1);
      expect(lines[0]).toMatch(/\tagent\.progress\.reported\ttest\.broken@7\tattempts=1\t.*\tboom$/);
      const out: string[] = [];
      await replay({ env, id: [String(rows[0]!.id)], out: (l) => out.push(l) });
      expect(out).toEqual(['replayed 1']);
      await expect(replay({ env, out: () => {} })).rejects.toThrow(/--id <n>/);
    } finally {
      await gw.stop();
    }
  });
});
