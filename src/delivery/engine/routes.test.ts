import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import { auth } from '../../server/testing.js';
import { type Harness, harness, type ScriptedReceiver, SECRET, startScriptedReceiver } from '../testing.js';

const DIALECTS = await dialects();
const admin = { ...auth('admin'), 'content-type': 'application/json' };

describe.each(DIALECTS)('the deliveries admin API on %s', (dialect) => {
  let h: Harness;
  let rx: ScriptedReceiver;
  afterEach(async () => {
    await h?.cleanup();
    await rx?.close();
  });

  async function setup() {
    rx = await startScriptedReceiver({ secret: SECRET });
    h = await harness({
      dialect,
      channels: { hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' } },
    });
  }

  const replay = (body: unknown, headers: Record<string, string> = admin) =>
    h.app.request('/v1/deliveries/replay', {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('lists dead deliveries with their classification, attempts and last response', async () => {
    await setup();
    rx.script = () => ({ kind: 'answer', status: 400, body: '{"error":"bad shape"}' });
    const { id } = await h.enqueue('hook');
    await h.drain();
    const res = await h.app.request('/v1/deliveries?status=dead', { headers: auth('admin') });
    expect(res.status).toBe(200);
    const { deliveries } = (await res.json()) as { deliveries: Record<string, unknown>[] };
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      id,
      status: 'dead',
      attempts: 1,
      last_status: 400,
      last_error: 'rejected with 400',
      last_response: '{"error":"bad shape"}',
    });
  });

  it('replays a dead delivery under the current config and records the replay', async () => {
    await setup();
    rx.script = () => ({ kind: 'answer', status: 400 });
    const { id, eventId } = await h.enqueue('hook');
    await h.drain();
    // The config now points at a fixed receiver path; the replay must use it, not the old one.
    (h.services.config as unknown as { channels: unknown }).channels = {
      hook: { type: 'webhook', url: `${rx.url}/fixed`, secret_env: 'HOOK_SECRET' },
    };
    rx.script = () => ({ kind: 'answer', status: 204 });
    const res = await replay({ ids: [id] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ replayed: [id], refused: [] });
    await h.drain();
    expect((await h.rows())[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(rx.hits.at(-1)?.url).toBe('/fixed');
    expect(rx.byId.get(eventId)).toBe(2);
    const types = (await h.events('integration.delivery')).map((e) => e.type);
    expect(types).toEqual([
      'integration.delivery.dead',
      'integration.delivery.replayed',
      'integration.delivery.succeeded',
    ]);
  });

  it('replays by destination and time range, and re-enables an endpoint a 410 disabled', async () => {
    await setup();
    rx.script = () => ({ kind: 'answer', status: 410 });
    const start = Date.now();
    await h.enqueue('hook');
    await h.drain();
    rx.script = () => ({ kind: 'answer', status: 200 });
    const res = await replay({
      destination: 'hook',
      from: new Date(start - 1000).toISOString(),
      to: Date.now() + 1000,
    });
    expect(res.status).toBe(200);
    await h.drain();
    expect((await h.rows())[0]?.status).toBe('succeeded');
    expect(Number((await h.endpoint('hook'))?.disabled)).toBe(0);
  });

  it('refuses to replay to a channel that was removed from the config, saying so', async () => {
    await setup();
    rx.script = () => ({ kind: 'answer', status: 400 });
    const { id } = await h.enqueue('hook');
    await h.drain();
    (h.services.config as unknown as { channels: unknown }).channels = {};
    const res = await replay({ ids: [id] });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('conflict');
    expect(body.error.message).toContain('channel hook is no longer configured');
    expect((await h.rows())[0]?.status).toBe('dead');
  });

  it('refuses unknown ids and deliveries that are not dead', async () => {
    await setup();
    const { id } = await h.enqueue('hook');
    const res = await replay({ ids: [id, 'dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ'] });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { details: { id: string; reason: string }[] } };
    expect(body.error.details.map((d) => d.reason)).toEqual([
      'no such delivery',
      'status is pending; only dead and reconcile replay',
    ]);
  });

  it('answers malformed, mistyped, unknown-field, empty and oversized replay bodies with 4xx', async () => {
    await setup();
    expect((await replay('{not json')).status).toBe(400);
    expect((await replay({ ids: 'dlv_x' })).status).toBe(400);
    expect((await replay({ ids: ['not-an-id'] })).status).toBe(400);
    expect((await replay({ destination: 'hook', extra: 1 })).status).toBe(400);
    expect((await replay({})).status).toBe(400);
    expect((await replay({ from: Date.now(), to: Date.now() - 1 })).status).toBe(400);
    const big = { destination: 'hook', pad: 'x'.repeat(2_000_000) };
    expect((await replay(big)).status).toBe(413);
    const text = await h.app.request('/v1/deliveries/replay', {
      method: 'POST',
      headers: { ...auth('admin'), 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(text.status).toBe(415);
  });

  it('answers bad list filters with 400', async () => {
    await setup();
    for (const q of ['status=gone', 'destination=Bad!', 'limit=0', 'limit=x']) {
      const res = await h.app.request(`/v1/deliveries?${q}`, { headers: auth('admin') });
      expect(res.status).toBe(400);
    }
  });

  it('keeps both routes to admin keys', async () => {
    await setup();
    for (const role of ['agent', 'approver'] as const) {
      expect((await h.app.request('/v1/deliveries', { headers: auth(role) })).status).toBe(403);
      expect(
        (await replay({ destination: 'hook' }, { ...auth(role), 'content-type': 'application/json' })).status,
      ).toBe(403);
    }
    expect((await h.app.request('/v1/deliveries')).status).toBe(401);
  });
});
