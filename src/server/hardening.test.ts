import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode } from '../ingress/admission/payload.js';
import { ingressModule } from '../ingress/module.js';
import {
  GITHUB_SECRET,
  githubDelivery,
  githubExample,
  SLACK_SECRET,
  slackRequest,
} from '../ingress/testing.js';
import { RUNTIME_KINDS } from '../runtimes/index.js';
import { hasLoneSurrogate } from '../text/index.js';
import { allModules } from './modules.js';
import { auth, type TestApp, testApp } from './testing.js';

/**
 * Issue #22, one regression per input class, on the whole app: lone surrogates (1), depth (2), the
 * config path in /readyz (8), Host and Origin (10). Class 3 (413 then reset) is connection.test.ts;
 * the generated corpus over every route is fuzz.test.ts.
 */

const LONE = '\ud83d';
const WHSEC = `whsec_${Buffer.from('standard-webhooks-test-secret-0123').toString('base64')}`;
const deep = (n: number, leaf = '1') => `${'['.repeat(n)}${leaf}${']'.repeat(n)}`;

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    modules: allModules().map((m) =>
      m.name === 'ingress' ? ingressModule({ workers: false, secrets: () => undefined }) : m,
    ),
    config: {
      sources: {
        github: { type: 'github', secret: GITHUB_SECRET },
        slack: { type: 'slack', secret: SLACK_SECRET },
        std: { type: 'standard-webhooks', secret: WHSEC },
        tg: { type: 'telegram', secret: 'tg_token-1' },
        gl: { type: 'gitlab', secret: 'gl-token-1' },
        mac: { type: 'hmac', secret: 'mac-secret', header: 'X-Signature', id_header: 'X-Delivery' },
        fs: { type: 'feishu', verification_token: 'fs-token-1' },
      },
    },
  });
});
afterAll(async () => t?.cleanup());

const post = (path: string, body: string, headers: Record<string, string> = auth('admin'), method = 'POST') =>
  t.app.request(path, { method, body, headers: { 'content-type': 'application/json', ...headers } });

async function code(res: Response): Promise<string | undefined> {
  const body = (await res.json()) as { error?: { code?: string } };
  return body.error?.code;
}

describe('class 1: lone UTF-16 surrogates', () => {
  // The endpoints the probe found answering 500, each with a body that is otherwise valid.
  const bodies: [string, string, 'admin' | 'agent'][] = [
    ['/v1/gate/evaluate', `{"tool":"Bash","input":{"command":"echo ${LONE}"}}`, 'admin'],
    ['/v1/incidents/freeze', `{"agent":"bot","reason":"r${LONE}"}`, 'admin'],
    ['/v1/incidents/revoke', `{"agent":"bot","reason":"r${LONE}"}`, 'admin'],
    ['/v1/approvals', `{"action":"deploy ${LONE}","reason":"why"}`, 'agent'],
    ['/v1/progress', `{"stage":"done","summary":"ok ${LONE}"}`, 'agent'],
    ['/v1/capabilities/verify', `{"token":"x${LONE}","plan":{"tool":"Bash","input":{}}}`, 'admin'],
  ];

  it.each(bodies)('%s answers 400 unrepresentable_json', async (path, body, role) => {
    const res = await post(path, JSON.stringify(JSON.parse(body)), auth(role));
    expect(res.status).toBe(400);
    expect(await code(res)).toBe('unrepresentable_json');
  });

  it('PUT /v1/away answers 400 unrepresentable_json', async () => {
    const res = await post(
      '/v1/away',
      JSON.stringify({ away: true, owner: `me${LONE}` }),
      auth('approver'),
      'PUT',
    );
    expect(res.status).toBe(400);
    expect(await code(res)).toBe('unrepresentable_json');
  });

  it('every hook route answers each of its runtime fixtures carrying a lone surrogate with 400, never 5xx', async () => {
    let sent = 0;
    for (const runtime of RUNTIME_KINDS) {
      const dir = new URL(`../runtimes/${runtime}/fixtures/`, import.meta.url);
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
        const fixture = JSON.parse(readFileSync(new URL(encodeURIComponent(file), dir), 'utf8')) as Record<
          string,
          unknown
        >;
        const res = await post(
          `/v1/runtimes/${runtime}/hooks`,
          JSON.stringify({ ...fixture, last_assistant_message: `done ${LONE}` }),
          auth('agent'),
        );
        sent++;
        expect(res.status, `${runtime} ${file}`).toBe(400);
        expect(await res.text()).toContain('unrepresentable_json');
      }
    }
    expect(sent).toBeGreaterThan(30);
  });

  it('accepts a signed webhook carrying one from every source kind: the bytes kept verbatim, the facts well-formed', async () => {
    const now = Date.now();
    const repo = `Codertocat/Hello-${LONE}`;
    const gh = githubExample('push');
    (gh.repository as Record<string, unknown>).full_name = repo;
    const githubReq = await githubDelivery('push', gh);
    const slackBody = JSON.stringify({
      type: 'event_callback',
      event_id: `Ev${LONE}1`,
      team_id: `T${LONE}`,
      event: { type: 'message', text: LONE },
    });
    const stdBody = JSON.stringify({ type: `invoice.paid${LONE}`, data: { id: LONE } });
    const tgBody = JSON.stringify({ update_id: 77, message: { chat: { id: 5 }, text: `hi ${LONE}` } });
    const glBody = JSON.stringify({
      object_kind: `push${LONE}`,
      project: { path_with_namespace: `g/${LONE}` },
    });
    const macBody = JSON.stringify({ type: `evt${LONE}` });
    const fsBody = JSON.stringify({
      schema: '2.0',
      header: {
        event_id: `e${LONE}1`,
        event_type: 'im.message.receive_v1',
        token: 'fs-token-1',
        tenant_key: `tk${LONE}`,
      },
      event: { message: { content: LONE } },
    });
    const cases: [string, Record<string, string>, string][] = [
      ['github', githubReq.headers, githubReq.body],
      ['slack', slackRequest(slackBody, now), slackBody],
      ['std', stdHeaders(stdBody, now), stdBody],
      ['tg', { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': 'tg_token-1' }, tgBody],
      [
        'gl',
        { 'content-type': 'application/json', 'x-gitlab-token': 'gl-token-1', 'idempotency-key': 'gl-1' },
        glBody,
      ],
      [
        'mac',
        {
          'content-type': 'application/json',
          'x-delivery': 'mac-1',
          'x-signature': createHmac('sha256', 'mac-secret').update(macBody).digest('hex'),
        },
        macBody,
      ],
      ['fs', { 'content-type': 'application/json' }, fsBody],
    ];
    expect(hasLoneSurrogate(JSON.parse(githubReq.body).repository.full_name)).toBe(true);
    for (const [source, headers, body] of cases) {
      const res = await t.app.request(`/v1/ingress/${source}`, { method: 'POST', headers, body });
      expect(res.status, source).toBe(202);
      const { id } = (await res.json()) as { id: string };
      const event = (await t.services.log.list({ type: 'integration.webhook.accepted', limit: 1000 })).find(
        (e) => e.envelope.event_id === id,
      )?.envelope;
      expect(event, source).toBeDefined();
      expect(hasLoneSurrogate(JSON.stringify(event))).toBe(false);
      expect((await t.services.vault.get(event!.payload_ref!))?.toString('utf8')).toBe(body);
    }
    // Admission reads the verbatim bytes back and repairs them the same way.
    expect(decode(githubReq.body)).toMatchObject({ repository: { full_name: 'Codertocat/Hello-\ufffd' } });
  });
});

function stdHeaders(body: string, now: number): Record<string, string> {
  const id = `msg_${now}`;
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now / 1000)),
    'webhook-signature': new Webhook(WHSEC).sign(id, new Date(now), body),
  };
}

describe('class 2: nesting depth', () => {
  it('refuses a deep payload_json on /v1/approvals with 400 json_too_deep, storing nothing', async () => {
    const before = (await t.services.log.list({ limit: 1000 })).length;
    const res = await post(
      '/v1/approvals',
      JSON.stringify({ action: 'a', reason: 'b', payload_json: `{"x":${deep(10_000)}}` }),
      auth('agent'),
    );
    expect(res.status).toBe(400);
    expect(await code(res)).toBe('json_too_deep');
    expect((await t.services.log.list({ limit: 1000 })).length).toBe(before);
  });

  it('refuses a deep input on /v1/gate/evaluate with 400 json_too_deep', async () => {
    const res = await post('/v1/gate/evaluate', `{"tool":"Bash","input":{"x":${deep(10_000)}}}`);
    expect(res.status).toBe(400);
    expect(await code(res)).toBe('json_too_deep');
  });

  it('refuses a deep hook with the runtime native error, 400', async () => {
    const res = await post(
      '/v1/runtimes/claude-code/hooks',
      `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":${deep(5000, '{}')}}`,
      auth('agent'),
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('json_too_deep');
  });

  it('refuses a deep signed webhook with 400 json_too_deep', async () => {
    const d = await githubDelivery('push', { nested: JSON.parse(deep(100)) });
    const res = await t.app.request('/v1/ingress/github', {
      method: 'POST',
      headers: d.headers,
      body: d.body,
    });
    expect(res.status).toBe(400);
    expect(await code(res)).toBe('json_too_deep');
  });
});

describe('class 8: /readyz', () => {
  it('tells anyone only whether the config came from a file, and an admin the path', async () => {
    t.services.configSource = '/etc/switchboard/secret-place.yaml';
    try {
      const anon = await (await t.app.request('/readyz')).json();
      expect(anon).toMatchObject({ status: 'ready', config: 'file' });
      expect(JSON.stringify(anon)).not.toContain('secret-place');
      const agent = await (await t.app.request('/readyz', { headers: auth('agent') })).json();
      expect(JSON.stringify(agent)).not.toContain('secret-place');
      const admin = await (await t.app.request('/readyz', { headers: auth('admin') })).json();
      expect(admin).toMatchObject({ config: 'file', config_path: '/etc/switchboard/secret-place.yaml' });
    } finally {
      t.services.configSource = 'built-in defaults';
    }
    expect(await (await t.app.request('/readyz')).json()).toMatchObject({ config: 'defaults' });
  });
});

describe('class 10: Host and Origin on every route', () => {
  const routes = () => {
    const seen = new Set<string>();
    return t.app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({ method: r.method, path: r.path.replace(/:(\w+)(\{[^}]*\})?/g, 'x') }))
      .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
  };

  it('refuses a foreign Host with 403 host_not_allowed on every route, before anything runs', async () => {
    const all = routes();
    expect(all.length).toBeGreaterThan(30);
    for (const r of all) {
      const res = await t.app.request(r.path, {
        method: r.method,
        headers: { host: 'evil.example.com', ...auth('admin'), 'content-type': 'application/json' },
        ...(r.method === 'GET' ? {} : { body: '{}' }),
      });
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
      expect(await code(res)).toBe('host_not_allowed');
    }
  });

  it('refuses a page of another site with 403 origin_not_allowed on every route', async () => {
    for (const r of routes()) {
      const res = await t.app.request(r.path, {
        method: r.method,
        headers: { host: '127.0.0.1:8787', origin: 'http://evil.example.com', ...auth('admin') },
      });
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
      expect(await code(res)).toBe('origin_not_allowed');
    }
  });

  it('answers a name listed in server.allowed_hosts', async () => {
    t.services.config.server.allowed_hosts = ['switchboard.internal'];
    try {
      expect(
        (await t.app.request('/healthz', { headers: { host: 'switchboard.internal:8787' } })).status,
      ).toBe(200);
    } finally {
      t.services.config.server.allowed_hosts = [];
    }
  });
});
