import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localService, type ReachApp, reachApp, type Service } from './testing.js';

/** `http` tools against a local service (slow, failing, huge-body and chunked endpoints) on 127.0.0.1. */

const city = { type: 'object', required: ['city'], properties: { city: { type: 'string', minLength: 1 } } };
const none = { type: 'object', properties: {} };

function tools(base: string) {
  return {
    'weather.get': {
      kind: 'http',
      input_schema: city,
      http: {
        method: 'GET',
        url: `${base}/weather?city={city}`,
        headers: { authorization_env: 'WEATHER_TOKEN', 'x-team': 'ops' },
      },
      redact: ['email'],
    },
    'ticket.create': {
      kind: 'http',
      permission: 'write',
      input_schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
      http: { method: 'POST', url: `${base}/echo` },
    },
    'svc.fail': { kind: 'http', input_schema: none, http: { url: `${base}/fail` } },
    'svc.huge': { kind: 'http', input_schema: none, http: { url: `${base}/huge?bytes=3000000` } },
    'svc.slow': { kind: 'http', timeout_ms: 200, input_schema: none, http: { url: `${base}/slow?ms=5000` } },
    'svc.redirect': { kind: 'http', input_schema: none, http: { url: `${base}/redirect` } },
    'svc.text': { kind: 'http', input_schema: none, http: { url: `${base}/text` } },
    'svc.chunked': {
      kind: 'http',
      input_schema: none,
      http: { url: `${base}/chunked` },
      redact: ['cn_mobile'],
    },
  };
}

describe('http tools', () => {
  let svc: Service;
  let r: ReachApp;
  beforeAll(async () => {
    svc = await localService();
    r = await reachApp({ config: { tools: tools(svc.url) }, env: { WEATHER_TOKEN: 'Bearer w-token-123' } });
  });
  afterAll(async () => {
    await r.cleanup();
    await svc.close();
  });

  it('fills the URL template percent-encoded, sends the configured headers, parses JSON and redacts it', async () => {
    const { status, body } = await r.touch({ tool_name: 'weather.get', params: { city: 'São Paulo & Rio' } });
    expect(status).toBe(200);
    expect(body.data).toEqual({
      city: 'São Paulo & Rio',
      temp_c: 21,
      sky: 'clear',
      contact: '[redacted:email]',
    });
    const req = svc.seen.at(-1)!;
    expect(req.path).toBe('/weather?city=S%C3%A3o%20Paulo%20%26%20Rio');
    expect(req.headers.authorization).toBe('Bearer w-token-123');
    expect(req.headers['x-team']).toBe('ops');
  });

  it('sends the params as a JSON body for a POST tool', async () => {
    const { body } = await r.touch({ tool_name: 'ticket.create', params: { title: 'printer' } });
    expect(body.data).toEqual({ method: 'POST', body: { title: 'printer' } });
  });

  it('answers TOOL_FAILED with the status and a short excerpt free of secrets and phone numbers', async () => {
    const { status, body } = await r.touch({ tool_name: 'svc.fail', params: {} });
    expect(status).toBe(502);
    const e = body.error as { code: string; details: { status: number; excerpt: string } };
    expect(e.code).toBe('TOOL_FAILED');
    expect(e.details.status).toBe(500);
    expect(e.details.excerpt).toContain('Internal error');
    expect(e.details.excerpt).not.toContain('hunter2');
    expect(e.details.excerpt).not.toContain('13800138000');
    expect(e.details.excerpt).not.toContain('sk-ant-');
  });

  it('stops reading a body over the result cap: RESULT_TOO_LARGE', async () => {
    const { status, body } = await r.touch({ tool_name: 'svc.huge', params: {} });
    expect(status).toBe(502);
    expect(body.error).toMatchObject({ code: 'RESULT_TOO_LARGE', details: { limit_bytes: 1048576 } });
  });

  it('times out a slow service at the tool deadline instead of inventing an answer', async () => {
    const t0 = Date.now();
    const { status, body } = await r.touch({ tool_name: 'svc.slow', params: {} });
    expect(status).toBe(504);
    expect(body.error).toMatchObject({ code: 'TIMEOUT' });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('does not follow a redirect', async () => {
    const { body } = await r.touch({ tool_name: 'svc.redirect', params: {} });
    expect(body.error).toMatchObject({ code: 'TOOL_FAILED', details: { status: 302 } });
  });

  it('returns a text body as a string', async () => {
    const { body } = await r.touch({ tool_name: 'svc.text', params: {} });
    expect(body.data).toBe('plain text answer');
  });

  it('streams a chunked body as Server-Sent Events, line by line with PII redacted, then the result', async () => {
    const res = await r.t.app.request('/v1/touch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer agent-key-0123456789abcdef' },
      body: JSON.stringify({ tool_name: 'svc.chunked', params: {}, channel: 'stream' }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const events = text
      .trim()
      .split('\n\n')
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)?.[1],
        data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>,
      }));
    expect(events.filter((e) => e.event === 'partial').map((e) => e.data.text)).toEqual([
      'line 1 call [redacted:cn_mobile]',
      'line 2 call [redacted:cn_mobile]',
      'line 3 call [redacted:cn_mobile]',
      'done',
    ]);
    const last = events.at(-1)!;
    expect(last.event).toBe('result');
    expect(last.data.ok).toBe(true);
    expect(String(last.data.data)).not.toMatch(/1391234/);
  });
});

describe('http tools behind the egress guard', () => {
  let svc: Service;
  let r: ReachApp;
  beforeAll(async () => {
    svc = await localService();
    r = await reachApp({
      config: { tools: tools(svc.url), egress: { allow: [] } },
      env: { WEATHER_TOKEN: 't' },
      allow: [],
    });
  });
  afterAll(async () => {
    await r.cleanup();
    await svc.close();
  });

  it('refuses a loopback target that egress.allow does not list, and sends nothing', async () => {
    const before = svc.seen.length;
    const { body } = await r.touch({ tool_name: 'svc.text', params: {} });
    expect(body.error).toMatchObject({ code: 'TOOL_FAILED', details: { status: 'egress_blocked' } });
    expect((body.error as { message: string }).message).toContain('egress.allow');
    expect(svc.seen.length).toBe(before);
  });
});
