import { afterEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, NOW, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { ntfy } from './index.js';

const TOKEN = 'tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2';
const body = (r: HttpRequest) => JSON.parse(r.body) as Record<string, unknown>;

channelCase({
  kind: ntfy,
  rawConfig: { type: 'ntfy', url: 'https://ntfy.example', topic: 'agents', token_env: 'NTFY_TOKEN' },
  secrets: { NTFY_TOKEN: TOKEN },
  text: (r) => String(body(r)['message']),
  wire: (r) => r.body,
  buttons: (r) => {
    const actions = body(r)['actions'] as { action: string; url: string }[] | undefined;
    const http = actions?.filter((a) => a.action === 'http') ?? [];
    return http[0] && http[1] ? { approve: http[0].url, reject: http[1].url } : undefined;
  },
  responses: {
    ok: response(200, { id: 'sPs71M8A2T', time: 1, event: 'message', topic: 'agents' }),
    business: response(403, { code: 40301, http: 403, error: 'forbidden' }),
    businessExpect: 'dead',
    rateLimited: response(429, { code: 42901, http: 429, error: 'limit reached: too many requests' }),
    serverError: response(500, { code: 50001, http: 500, error: 'internal server error' }),
  },
});

/** What ntfy's publish endpoint checks (docs/publish.md): root URL, topic, priority 1-5, ≤3 actions, 4096 bytes. */
function ntfyServer(req: ReceivedRequest): Answer {
  if (req.method !== 'POST' || req.url !== '/')
    return json(404, { code: 40401, http: 404, error: 'page not found' });
  if (req.headers['authorization'] !== `Bearer ${TOKEN}`)
    return json(401, { code: 40101, http: 401, error: 'unauthorized' });
  const m = JSON.parse(req.body) as Record<string, unknown>;
  const topic = m['topic'];
  if (typeof topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(topic)) {
    return json(400, { code: 40009, http: 400, error: 'invalid request: topic invalid' });
  }
  const priority = m['priority'];
  if (!Number.isInteger(priority) || (priority as number) < 1 || (priority as number) > 5) {
    return json(400, { code: 40007, http: 400, error: 'invalid priority' });
  }
  const actions = (m['actions'] ?? []) as { action: string; label: string; url: string; method?: string }[];
  const validAction = (a: (typeof actions)[number]) =>
    ['view', 'http', 'broadcast'].includes(a.action) && a.label && (a.action === 'broadcast' || a.url);
  if (actions.length > 3 || !actions.every(validAction)) {
    return json(400, { code: 40018, http: 400, error: 'invalid request: actions invalid' });
  }
  if (Buffer.byteLength(String(m['message'] ?? ''), 'utf8') > 4096) {
    return json(400, { code: 40000, http: 400, error: 'message too long (would become an attachment)' });
  }
  if (topic === 'limited')
    return json(429, { code: 42901, http: 429, error: 'limit reached: too many requests' });
  return json(200, { id: `msg${Date.now()}`, time: 1, expires: 2, event: 'message', ...m });
}

describe('ntfy against a local ntfy stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const deps = {
    post: fetchPost,
    now: () => NOW,
    secret: (e: string) => (e === 'NTFY_TOKEN' ? TOKEN : undefined),
  };

  it('publishes JSON to the root URL with the topic, priority, tags, click and http approve/reject actions', async () => {
    rx = await startReceiver(ntfyServer);
    const config = ntfy.configSchema.parse({
      type: 'ntfy',
      url: rx.url,
      topic: 'agents',
      token_env: 'NTFY_TOKEN',
    });
    const res = await ntfy.send(approvalMessage({ severity: 'critical' }), config, deps);
    expect(res.kind).toBe('ok');
    const sent = JSON.parse(rx.requests[0]?.body ?? '{}');
    expect(sent).toMatchObject({
      topic: 'agents',
      priority: 5,
      click: expect.stringContaining('/console/approvals/'),
    });
    expect(sent.actions.slice(0, 2)).toEqual([
      expect.objectContaining({ action: 'http', method: 'POST', label: 'Approve', clear: true }),
      expect.objectContaining({ action: 'http', method: 'POST', label: 'Reject', clear: true }),
    ]);
  });

  it('reports a wrong token as dead and a rate limit as retry', async () => {
    rx = await startReceiver(ntfyServer);
    const url = rx.url;
    const wrong = { ...deps, secret: () => 'tk_wrong' };
    const config = ntfy.configSchema.parse({ type: 'ntfy', url, topic: 'agents', token_env: 'NTFY_TOKEN' });
    expect((await ntfy.send(sampleMessage(), config, wrong)).kind).toBe('dead');
    const limited = ntfy.configSchema.parse({ type: 'ntfy', url, topic: 'limited', token_env: 'NTFY_TOKEN' });
    expect((await ntfy.send(sampleMessage(), limited, deps)).kind).toBe('retry');
  });

  it('is dead without calling anyone when the token variable is missing', async () => {
    rx = await startReceiver(ntfyServer);
    const config = ntfy.configSchema.parse({
      type: 'ntfy',
      url: rx.url,
      topic: 'agents',
      token_env: 'NTFY_TOKEN',
    });
    const res = await ntfy.send(sampleMessage(), config, { ...deps, secret: () => undefined });
    expect(res).toEqual({ kind: 'dead', reason: 'environment variable NTFY_TOKEN is not set' });
    expect(rx.requests).toHaveLength(0);
  });

  it('carries an approve action a phone can press: the app POSTs to the signed link and the gateway sees it', async () => {
    const gateway = await startReceiver(() => json(200, { status: 'approved' }));
    rx = await startReceiver(ntfyServer);
    try {
      const actions = {
        approveUrl: `${gateway.url}/v1/approvals/apr_1/approve?t=one-time`,
        rejectUrl: `${gateway.url}/v1/approvals/apr_1/reject?t=one-time`,
        pageUrl: `${gateway.url}/console/approvals/apr_1`,
        approvalId: 'apr_1',
      };
      const config = ntfy.configSchema.parse({
        type: 'ntfy',
        url: rx.url,
        topic: 'agents',
        token_env: 'NTFY_TOKEN',
      });
      expect((await ntfy.send(approvalMessage({ actions }), config, deps)).kind).toBe('ok');
      // What the ntfy app does on a tap of an `http` action: method (default POST), url, headers, body.
      const published = JSON.parse(rx.requests[0]?.body ?? '{}');
      const approve = published.actions.find((a: { label: string }) => a.label === 'Approve');
      const pressed = await fetch(approve.url, {
        method: approve.method ?? 'POST',
        headers: approve.headers ?? {},
        body: approve.body ?? '',
      });
      expect(pressed.status).toBe(200);
      expect(gateway.requests.map((r) => [r.method, r.url])).toEqual([
        ['POST', '/v1/approvals/apr_1/approve?t=one-time'],
      ]);
    } finally {
      await gateway.close();
    }
  });
});
