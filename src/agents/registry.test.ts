import { AgentCard } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type TestApp, testApp } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { peerCard } from './testing.js';

const AGENT_KEYS = {
  analyst: 'analyst-key-0123456789abcdef',
  checker: 'checker-key-0123456789abcdef',
};
const bearer = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const card = (name: string, skills: string[]) =>
  AgentCard.toJSON(peerCard(name, 'http://127.0.0.1:9/rpc', skills)) as Record<string, unknown>;

describe.each(await dialects())('the agent registry on %s', (dialect) => {
  let t: TestApp;
  let clock = Date.parse('2026-12-01T12:00:00Z');
  const post = (path: string, body: unknown, key: string = KEYS.agent) =>
    t.app.request(path, { method: 'POST', headers: bearer(key), body: JSON.stringify(body) });
  const get = (path: string, key: string = KEYS.agent) => t.app.request(path, { headers: bearer(key) });

  beforeAll(async () => {
    t = await testApp({
      dialect,
      now: () => clock,
      config: {
        auth: {
          keys: [
            { name: 'ops', role: 'admin', key: KEYS.admin },
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'analyst', role: 'agent', key: AGENT_KEYS.analyst },
            { name: 'checker', role: 'agent', key: AGENT_KEYS.checker },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('lets an agent register itself with its own key and lists it with its skills', async () => {
    const r = await post(
      '/v1/agents',
      { id: 'analyst', card: card('Analyst', ['analyze', 'summarize']) },
      AGENT_KEYS.analyst,
    );
    expect(r.status).toBe(201);
    const listed = (await (await get('/v1/agents')).json()) as Record<string, unknown>[];
    // The shape: a bare list.
    expect(listed).toEqual([
      expect.objectContaining({
        id: 'analyst',
        name: 'Analyst',
        skills: ['analyze', 'summarize'],
        status: 'up',
        load: 0,
        success_rate: 1,
        latency_ms_p50: null,
        last_seen: new Date(clock).toISOString(),
      }),
    ]);
  });

  it('refuses to register an agent under another key’s name (403)', async () => {
    const r = await post(
      '/v1/agents',
      { id: 'analyst', card: card('Fake', ['analyze']) },
      AGENT_KEYS.checker,
    );
    expect(r.status).toBe(403);
  });

  it('refuses a card that is not A2A v1.0, naming the field', async () => {
    const v03 = {
      name: 'Old',
      url: 'http://127.0.0.1:9/rpc',
      preferredTransport: 'JSONRPC',
      skills: [{ id: 'x' }],
    };
    const r = await post('/v1/agents', { id: 'checker', card: v03 }, AGENT_KEYS.checker);
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('AGENT_CARD_INVALID');
    expect(body.error.message).toContain('card.supportedInterfaces');
    const noSkills = { ...card('Checker', ['check']), skills: [] };
    const r2 = await post('/v1/agents', { id: 'checker', card: noSkills }, AGENT_KEYS.checker);
    expect(((await r2.json()) as { error: { message: string } }).error.message).toContain('card.skills');
  });

  it('refuses a card URL the egress guard refuses', async () => {
    const r = await post(
      '/v1/agents',
      { id: 'checker', card_url: 'http://10.20.30.40/.well-known/agent-card.json' },
      AGENT_KEYS.checker,
    );
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('AGENT_CARD_INVALID');
    expect(body.error.message).toContain('egress guard refused');
  });

  it('refuses malformed registrations: unknown fields, both or neither of card and card_url, bad ids', async () => {
    for (const body of [
      { id: 'checker', card: card('C', ['check']), extra: 1 },
      { id: 'checker' },
      { id: 'checker', card: card('C', ['check']), card_url: 'https://x.example/' },
      { id: '../etc', card: card('C', ['check']) },
      { id: 42, card: card('C', ['check']) },
    ]) {
      const r = await post('/v1/agents', body, KEYS.admin);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('validation_failed');
    }
    const r = await t.app.request('/v1/agents', {
      method: 'POST',
      headers: bearer(KEYS.admin),
      body: '{"id":',
    });
    expect(r.status).toBe(400);
  });

  it('takes heartbeats only from the key bound to the agent (403 otherwise), 404 for an unknown agent', async () => {
    expect((await post('/v1/agents/analyst/heartbeat', { load: 2 }, AGENT_KEYS.checker)).status).toBe(403);
    expect((await post('/v1/agents/analyst/heartbeat', { load: 2 }, KEYS.admin)).status).toBe(403);
    expect((await post('/v1/agents/nobody/heartbeat', {}, AGENT_KEYS.checker)).status).toBe(404);
    expect((await post('/v1/agents/analyst/heartbeat', { load: -1 }, AGENT_KEYS.analyst)).status).toBe(400);
    expect((await post('/v1/agents/analyst/heartbeat', { mood: 'ok' }, AGENT_KEYS.analyst)).status).toBe(400);
    const r = await post('/v1/agents/analyst/heartbeat', { load: 2 }, AGENT_KEYS.analyst);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ id: 'analyst', load: 2, status: 'up' });
  });

  it('marks an agent down once its last heartbeat is older than the TTL, and routes it no work', async () => {
    clock += 29_000;
    expect(((await (await get('/v1/agents')).json()) as { status: string }[])[0]!.status).toBe('up');
    clock += 2_000; // 31 s after the last heartbeat: past agents_heartbeat_ttl_seconds (30)
    const listed = (await (await get('/v1/agents')).json()) as { status: string; last_seen: string }[];
    expect(listed[0]!.status).toBe('down');
    const r = await post('/v1/collaborations', { skill: 'analyze', input: 'q3 numbers' });
    expect(r.status).toBe(503);
    const body = (await r.json()) as { error: { code: string; details: { agents: unknown[] } } };
    expect(body.error.code).toBe('NO_AGENT_AVAILABLE');
    expect(body.error.details.agents).toEqual([
      { id: 'analyst', status: 'up', last_seen: listed[0]!.last_seen },
    ]);
    // A heartbeat brings it back; `status: down` takes it out again at once (draining).
    await post('/v1/agents/analyst/heartbeat', {}, AGENT_KEYS.analyst);
    expect(((await (await get('/v1/agents')).json()) as { status: string }[])[0]!.status).toBe('up');
    await post('/v1/agents/analyst/heartbeat', { status: 'down' }, AGENT_KEYS.analyst);
    expect(((await (await get('/v1/agents')).json()) as { status: string }[])[0]!.status).toBe('down');
    await post('/v1/agents/analyst/heartbeat', { status: 'up' }, AGENT_KEYS.analyst);
  });

  it('refuses an unknown skill with NO_AGENT_FOR_SKILL, listing the skills that exist', async () => {
    const r = await post('/v1/collaborations', { skill: 'translate', input: 'hola' });
    expect(r.status).toBe(404);
    const body = (await r.json()) as { error: { code: string; details: { skills: string[] } } };
    expect(body.error.code).toBe('NO_AGENT_FOR_SKILL');
    expect(body.error.details.skills).toEqual(['analyze', 'summarize']);
  });

  it('records every routing decision as an event with the candidates and their scores', async () => {
    const events = await t.services.log.list({ limit: 50 });
    const routed = events.filter((e) => e.envelope.type === 'agent.collaboration.routed');
    expect(routed.length).toBeGreaterThanOrEqual(2);
    const down = routed.find((e) => e.envelope.redacted_summary.refused === 'none_up')!;
    expect(down.envelope.redacted_summary.candidates).toEqual([
      expect.objectContaining({ id: 'analyst', excluded: 'down', load: 2 }),
    ]);
  });

  it('refuses malformed collaborations and unknown receipts', async () => {
    for (const body of [
      { input: 'x' },
      { skill: 'analyze' },
      { skill: 'analyze', input: 'x', timeout_ms: 'soon' },
      { skill: 'analyze', input: 'x', strategy: 'random' },
      { skill: 'analyze', input: 'x', from_task_id: 'apr_01J00000000000000000000000' },
      { skill: 'analyze', input: 'x', surprise: true },
    ]) {
      const r = await post('/v1/collaborations', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect((await get('/v1/collaborations/col_01J00000000000000000000000')).status).toBe(404);
    expect((await get('/v1/collaborations/nope')).status).toBe(404);
  });
});
