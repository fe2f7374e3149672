import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type Receiver, startReceiver } from '../channels/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { loopbackOnly } from '../egress/testing.js';
import type { Module } from '../kernel/module.js';
import type { InProcessTool } from './inprocess.js';
import { type ReachApp, reachApp } from './testing.js';

// Vector 2a's secret (signature_vectors.md): the receiver verifies with the reference library.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PHONE = '13912345678';

/** Twelve rows, each with a mainland mobile number: head_tail keeps 4 and redacts every phone. */
const rows: InProcessTool = {
  name: 'crm.contacts',
  schema: { type: 'object', properties: { n: { type: 'integer', default: 12 } } },
  channel: 'async',
  context: { mode: 'head_tail', keep: 2 },
  redact: ['cn_mobile'],
  run: (p) => Array.from({ length: Number(p.n) }, (_, i) => ({ id: i + 1, phone: PHONE })),
};

const broken: InProcessTool = {
  name: 'crm.broken',
  schema: { type: 'object', properties: {} },
  channel: 'async',
  run: () => {
    throw new Error('backend down');
  },
};

const quick: InProcessTool = { name: 'crm.quick', schema: { type: 'object' }, run: () => ({ ok: 1 }) };

async function until<T>(what: string, fn: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the async channel pushes its result to a webhook callback', () => {
  let rx: Receiver;
  let r: ReachApp;
  const verified: Record<string, unknown>[] = [];
  beforeAll(async () => {
    rx = await startReceiver((req) => {
      try {
        verified.push(new Webhook(SECRET).verify(req.body, req.headers) as Record<string, unknown>);
      } catch {
        return json(401, { error: 'bad signature' });
      }
      return json(200, { ok: true });
    });
    r = await reachApp({
      tools: [rows, broken, quick],
      config: {
        server: { public_url: 'https://switchboard.example.com' },
        channels: {
          hook: { type: 'webhook', url: `${rx.url}/touch-results`, secret_env: 'HOOK_SECRET' },
          phone: { type: 'ntfy', url: `${rx.url}/ntfy`, topic: 'agents' },
        },
      },
      modules: [
        deliveryModule({ env: { HOOK_SECRET: SECRET }, egress: { dial: loopbackOnly } }) as unknown as Module,
      ],
    });
  });
  afterAll(async () => {
    await r.cleanup();
    await rx.close();
  });

  const pushedFor = (id: string) =>
    verified.find((b) => {
      const detail = (b.data as { detail?: string }).detail;
      return detail !== undefined && (JSON.parse(detail) as { request_id: string }).request_id === id;
    });

  it('answers running at once, then the signed push carries the processed, redacted result', async () => {
    const accepted = await r.touch({ tool_name: 'crm.contacts', params: {}, callback: 'hook' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ ok: true, status: 'running' });
    const id = accepted.body.request_id as string;

    const body = await until('the pushed result', () => pushedFor(id));
    expect(body.type).toBe('agent.progress.reported');
    const data = body.data as Record<string, unknown>;
    expect(data).toMatchObject({ stage: 'done', artifact: `https://switchboard.example.com/v1/touch/${id}` });
    const pushed = JSON.parse(data.detail as string) as Record<string, unknown>;
    expect(pushed).toMatchObject({ request_id: id, ok: true, status: 'done' });
    expect(pushed.data).toMatchObject({ total: 12, omitted: 8 });
    expect(rx.requests.every((q) => !q.body.includes(PHONE))).toBe(true);

    // The webhook id is the touch's `agent.touch.completed` event: a receiver de-duplicates on it.
    const req = rx.requests.find((q) => q.body.includes(id))!;
    const events = await r.t.services.log.list({ type: 'agent.touch.completed' });
    const completed = events.find((e) => e.envelope.redacted_summary.request_id === id);
    expect(req.headers['webhook-id']).toBe(completed?.envelope.event_id);
    expect(req.url).toBe('/touch-results');

    // Polling still works beside the push, and reads the same answer.
    const polled = await r.get(`/v1/touch/${id}`);
    expect(polled.body).toMatchObject({ request_id: id, ok: true, status: 'done' });
  });

  it('pushes a failure too, with its code', async () => {
    const accepted = await r.touch({ tool_name: 'crm.broken', params: {}, callback: 'hook' });
    const id = accepted.body.request_id as string;
    const body = await until('the pushed failure', () => pushedFor(id));
    const data = body.data as Record<string, unknown>;
    expect(data.stage).toBe('failed');
    expect(JSON.parse(data.detail as string)).toMatchObject({ ok: false, error: { code: 'TOOL_FAILED' } });
  });

  it('refuses a callback that is not an async webhook channel, naming the field', async () => {
    const cases = [
      { body: { tool_name: 'crm.quick', params: {}, callback: 'hook' }, why: /only for channel "async"/ },
      { body: { tool_name: 'crm.contacts', params: {}, callback: 'nowhere' }, why: /names no channel/ },
      { body: { tool_name: 'crm.contacts', params: {}, callback: 'phone' }, why: /ntfy channel/ },
    ];
    for (const c of cases) {
      const res = await r.touch(c.body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ ok: false, error: { code: 'INVALID_PARAMS' } });
      const problems = (res.body.error as { details: { problems: { path: string; message: string }[] } })
        .details.problems;
      expect(problems[0]?.path).toBe('callback');
      expect(problems[0]?.message).toMatch(c.why);
    }
  });
});
