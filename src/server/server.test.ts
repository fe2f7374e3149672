import { afterEach, describe, expect, it } from 'vitest';
import { auth, testApp, type TestApp } from './testing.js';

describe('server core routes', () => {
  let t: TestApp;
  afterEach(async () => {
    await t?.cleanup();
  });

  it('answers /healthz and /readyz when the store is reachable', async () => {
    t = await testApp();
    expect((await t.app.request('/healthz')).status).toBe(200);
    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', store: 'sqlite' });
  });

  it('fails /readyz when the database is lost, and a write answers 503 store_unavailable', async () => {
    t = await testApp();
    await t.services.db.close();
    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', problems: ['store unreachable'] });
    const events = await t.app.request('/v1/events', { headers: auth('admin') });
    expect(events.status).toBe(503);
    expect(await events.json()).toMatchObject({ error: { code: 'store_unavailable' } });
  });

  it('serves Prometheus metrics to loopback callers', async () => {
    t = await testApp();
    await t.app.request('/healthz');
    const res = await t.app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('switchboard_http_requests_total{method="GET",route="/healthz",status="200"} 1');
    expect(text).toContain('switchboard_outbox_pending');
  });

  it('requires an admin key for the event feed: 401 without a key, 403 for an agent key', async () => {
    t = await testApp();
    const none = await t.app.request('/v1/events');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect(
      (await t.app.request('/v1/events', { headers: { authorization: 'Bearer wrong-key-wrong-key' } }))
        .status,
    ).toBe(401);
    const agent = await t.app.request('/v1/events', { headers: auth('agent') });
    expect(agent.status).toBe(403);
    expect(await agent.json()).toMatchObject({ error: { code: 'forbidden' } });
  });

  it('lists envelopes filtered by correlation id and type, paging with after', async () => {
    t = await testApp();
    await t.services.emit({ type: 'agent.tool.requested', correlation_id: 'c1' });
    await t.services.emit({ type: 'agent.session.started', correlation_id: 'c1' });
    await t.services.emit({ type: 'agent.tool.requested', correlation_id: 'c2' });
    const res = await t.app.request('/v1/events?correlation_id=c1&type=agent.tool.requested', {
      headers: auth('admin'),
    });
    const body = (await res.json()) as { events: { type: string; seq: number }[]; next_after: number };
    expect(body.events.map((e) => e.type)).toEqual(['agent.tool.requested']);
    const page = (await (
      await t.app.request('/v1/events?after=1&limit=1', { headers: auth('admin') })
    ).json()) as typeof body;
    expect(page.events.map((e) => e.seq)).toEqual([2]);
    expect(page.next_after).toBe(2);
    expect((await t.app.request('/v1/events?after=abc', { headers: auth('admin') })).status).toBe(400);
  });

  it('answers an unknown path with a JSON 404', async () => {
    t = await testApp();
    const res = await t.app.request('/v1/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});

describe('key ring', () => {
  it('revokes a key added at run time', async () => {
    const { KeyRing } = await import('../kernel/auth.js');
    const ring = new KeyRing([]);
    ring.add('task-key-0123456789', { name: 'task:1', role: 'agent', task_id: 'tsk_1' });
    expect(ring.resolve('task-key-0123456789')?.task_id).toBe('tsk_1');
    expect(ring.remove('task-key-0123456789')).toBe(true);
    expect(ring.resolve('task-key-0123456789')).toBeUndefined();
    expect(ring.remove('task-key-0123456789')).toBe(false);
  });
});
