import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingressModule } from '../ingress/module.js';
import { GITHUB_SECRET, SLACK_SECRET } from '../ingress/testing.js';
import { RUNTIME_KINDS } from '../runtimes/index.js';
import { wellFormed } from '../text/index.js';
import { allModules } from './modules.js';
import { KEYS, type TestApp, testApp } from './testing.js';

/**
 * Issue #22's fuzz suite: ≥ 10,000 generated malformed requests over every route of the in-process app
 * (enumerated from Hono, so a new route is fuzzed the day it lands), bounded in time. The goal, printed
 * at the end: 0 answers with 5xx, 0 crashes, 0 requests left hanging. A seed reproduces a run:
 * `SWITCHBOARD_FUZZ_SEED=123 npx vitest run src/server/fuzz.test.ts` (`random` for a new one);
 * `SWITCHBOARD_FUZZ_REQUESTS` changes the count.
 */

const COUNT = Number(process.env.SWITCHBOARD_FUZZ_REQUESTS ?? 10_000);
const SEED =
  process.env.SWITCHBOARD_FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.SWITCHBOARD_FUZZ_SEED ?? 22);
const CONCURRENCY = 16;
/** Long enough for the longest legitimate hold the config below allows (a 1 s long poll). */
const HANG_MS = 15_000;
const LIMIT = 64 * 1024;
const SOURCES = ['github', 'slack', 'std', 'tg', 'gl', 'mac'];
const WHSEC = `whsec_${Buffer.from('standard-webhooks-test-secret-0123').toString('base64')}`;

interface Req {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

// ---------- values a careless agent or a hostile sender writes ----------

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), loneSurrogate),
      maxLength: 30,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '🚀'.repeat(200),
      'a'.repeat(5000),
      '$' + '{x}',
      '{{x}}',
      '../../etc/passwd',
      '@everyone',
      'javascript:alert(1)',
      '__proto__',
      'constructor',
      'apr_',
      'tsk_01J00000000000000000000000',
      '\u202e',
      'é'.normalize('NFD'),
    ),
  },
);
const nastyNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 53 + 1, 1e308));
const nastyJson: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    nastyNumber,
    nastyString,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('v'), { maxKeys: 4 }),
  ),
})).v;
const deepText = fc
  .tuple(fc.integer({ min: 40, max: 20_000 }), fc.constantFrom('[', '{"a":'), fc.boolean())
  .map(([n, open, closed]) => {
    const close = open === '[' ? ']' : '}';
    return `${open.repeat(n)}1${closed ? close.repeat(n) : ''}`;
  });
const rawJsonText = fc.constantFrom(
  '1e999',
  '{"a":1e999}',
  '-0',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"a":"\\ud800"}',
  '{"\\udc00":1}',
  '{"a":1,"a":2}',
  '[]',
  'null',
  '"str"',
  '{',
  '\ufeff{}',
  '{"a":"\\u0000"}',
);

// ---------- what each route expects, to mutate ----------

function fixtures(runtime: string): Record<string, unknown>[] {
  const dir = new URL(`../runtimes/${runtime}/fixtures/`, import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map(
      (f) => JSON.parse(readFileSync(new URL(encodeURIComponent(f), dir), 'utf8')) as Record<string, unknown>,
    );
}
const HOOKS = Object.fromEntries(RUNTIME_KINDS.map((r) => [r, fixtures(r)]));

const TEMPLATES: Record<string, Record<string, unknown>[]> = {
  'POST /v1/approvals': [
    { action: 'deploy', reason: 'ship it', payload_json: '{"env":"prod"}', tool: 'Bash' },
  ],
  'POST /v1/approvals/:id/decision': [{ decision: 'approve', comment: 'ok' }],
  'POST /v1/gate/evaluate': [
    { tool: 'Bash', input: { command: 'ls -la' }, session_id: 's1', runtime: 'claude-code' },
  ],
  'POST /v1/capabilities/verify': [{ token: 'a.b.c', plan: { tool: 'Bash', input: { command: 'ls' } } }],
  'POST /v1/incidents/revoke': [
    { agent: 'bot', reason: 'leak' },
    { task_id: 'tsk_01J00000000000000000000000', reason: 'r' },
  ],
  'POST /v1/incidents/freeze': [{ agent: 'bot', reason: 'leak' }],
  'POST /v1/incidents/unfreeze': [{ agent: 'bot', reason: 'fixed' }],
  'POST /v1/progress': [{ stage: 'done', summary: 'finished', detail: 'all good', severity: 'info' }],
  'PUT /v1/away': [{ away: false }, { away: true, owner: 'me' }],
  'POST /v1/tasks/:id/resume': [{ message: 'carry on' }],
  'POST /v1/deliveries/replay': [{ destination: 'phone' }, { ids: ['dlv_01J00000000000000000000000'] }],
  'POST /v1/ingress/deliveries/:id/replay': [{ source: 'github' }],
  'POST /mcp': [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'f', version: '1' } },
    },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'report_progress', arguments: { stage: 'done', summary: 'x' } },
    },
  ],
  'POST /v1/ingress/:source': [
    { action: 'opened', repository: { full_name: 'a/b' } },
    { update_id: 1, message: { text: 'hi' } },
  ],
  'POST /v1/touch': [
    { tool_name: 'issues.search', params: { query: 'open' }, request_id: 'r-1' },
    { tool_name: 'memory.set', params: { key: 'k', value: 'v' }, channel: 'stream', timeout: 1 },
  ],
  'POST /v1/callbacks/telegram/:channel': [{ update_id: 1, callback_query: { id: 'q', data: 'x' } }],
  'POST /v1/callbacks/slack/:channel/events': [{ type: 'url_verification', challenge: 'c' }],
};

/** Sets, removes or adds one field, at the top or one level down: the shapes a validator must catch. */
const mutated = (template: Record<string, unknown>) =>
  fc
    .tuple(fc.constantFrom('set', 'delete', 'add', 'nested', 'none'), fc.nat(), nastyJson, nastyString)
    .map(([op, pick, value, key]) => {
      const out = structuredClone(template);
      const keys = Object.keys(out);
      const k = keys[pick % Math.max(keys.length, 1)] ?? 'x';
      if (op === 'set') out[k] = value;
      else if (op === 'delete') delete out[k];
      else if (op === 'add')
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else if (op === 'nested') {
        const inner = Object.values(out).find(
          (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
        );
        if (inner) (inner as Record<string, unknown>)[key] = value;
        else out[k] = value;
      }
      return JSON.stringify(out);
    });

// ---------- requests ----------

const idParam = fc.oneof(
  fc.constantFrom('apr_01J00000000000000000000000', 'tsk_01J00000000000000000000000', 'dlv_x', 'x', ''),
  fc.constantFrom('%ED%A0%80', '%', '%zz', '..%2F..', '%F0%9F%98%80', '%00', 'a'.repeat(3000)),
  nastyString.map((s) => encodeURIComponent(wellFormed(s))),
);
function paramFor(name: string): fc.Arbitrary<string> {
  if (name === 'runtime')
    return fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...RUNTIME_KINDS) },
      { weight: 1, arbitrary: idParam },
    );
  if (name === 'source')
    return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...SOURCES) }, { weight: 1, arbitrary: idParam });
  return idParam;
}

const queryString = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom(
        'limit',
        'after',
        'type',
        'state',
        'wait',
        'correlation_id',
        'task_id',
        'owner',
        'decision',
        'source',
      ),
      nastyString,
    ),
    fc.oneof(
      fc.constantFrom(
        '-1',
        '0',
        '1',
        '1001',
        '99999999999999999999',
        'abc',
        'agent.*',
        'pending',
        '%ED%A0%80',
      ),
      nastyString,
    ),
    { maxKeys: 3 },
  )
  .map((q) => {
    const s = new URLSearchParams(
      Object.entries(q).map(([k, v]): [string, string] => [wellFormed(k), wellFormed(v)]),
    ).toString();
    return s ? `?${s}` : '';
  });

/** Mostly the right answer, sometimes a wrong one: a request refused at the door tests little. */
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>, weight = 9) =>
  fc.oneof({ weight, arbitrary: good }, { weight: 1, arbitrary: bad });

/** The role a route most likely wants, so most requests get past auth and reach the handler. */
function roleFor(method: string, path: string): keyof typeof KEYS {
  if (/^\/(mcp|v1\/runtimes|v1\/progress)/.test(path) || (method === 'POST' && path === '/v1/approvals'))
    return 'agent';
  if (path === '/v1/away' || path.endsWith('/decision')) return 'approver';
  return 'admin';
}

const headersFor = (method: string, path: string) =>
  fc.record({
    authorization: fc.oneof(
      { weight: 14, arbitrary: fc.constant(`Bearer ${KEYS[roleFor(method, path)]}`) },
      {
        weight: 3,
        arbitrary: fc.constantFrom(`Bearer ${KEYS.admin}`, `Bearer ${KEYS.agent}`, `Bearer ${KEYS.approver}`),
      },
      {
        weight: 3,
        arbitrary: fc.constantFrom(undefined, 'Bearer wrong-key-0123456789', 'Basic YTpi', 'Bearer'),
      },
    ),
    'content-type': mostly(
      fc.constantFrom('application/json', 'application/json; charset=utf-8'),
      fc.constantFrom(
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/vnd.api+json',
        'multipart/form-data; boundary=x',
        undefined,
      ),
      4,
    ),
    host: mostly(
      fc.constantFrom('127.0.0.1:8787', 'localhost', '[::1]:8787', 'localhost:8787'),
      fc.constantFrom('evil.example.com', '', 'a b', '127.0.0.1:8787@evil'),
      19,
    ),
    origin: mostly(
      fc.constantFrom(undefined, 'http://127.0.0.1:8787', 'null'),
      fc.constantFrom('http://evil.example.com', 'https://127.0.0.1:9'),
      19,
    ),
    'x-request-id': fc.constantFrom(undefined, undefined, 'x'.repeat(500), 'id'),
    'x-switchboard-bridge': fc.constantFrom(undefined, undefined, '1'),
  });

function bodyFor(key: string, path: string): fc.Arbitrary<string | Uint8Array | undefined> {
  const runtime = /^\/v1\/runtimes\/([^/]+)\/hooks$/.exec(path)?.[1];
  const templates = runtime && Object.hasOwn(HOOKS, runtime) ? HOOKS[runtime] : TEMPLATES[key];
  const shaped = templates?.length
    ? [{ weight: 6, arbitrary: fc.constantFrom(...templates).chain(mutated) }]
    : [];
  return fc.oneof(
    ...shaped,
    { weight: 2, arbitrary: nastyJson.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: deepText },
    { weight: 1, arbitrary: rawJsonText },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }) },
    { weight: 1, arbitrary: nastyString },
    {
      weight: 1,
      arbitrary: fc.constantFrom('decision=approve', 'decision=%ED%A0%80&x=1', 'payload=%7B%7D', 'text=hi'),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant('x'.repeat(LIMIT + 1)) },
  );
}

function requestArb(routes: { method: string; path: string }[]): fc.Arbitrary<Req> {
  return fc.constantFrom(...routes).chain((route) => {
    const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    return fc
      .tuple(
        fc.tuple(...names.map(paramFor)),
        queryString,
        headersFor(route.method, route.path),
        fc.oneof(
          { weight: 9, arbitrary: fc.constant(route.method) },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') },
        ),
      )
      .chain(([params, query, headers, method]): fc.Arbitrary<Req> => {
        let i = 0;
        const path = route.path.replace(/:(\w+)(\{[^}]*\})?/g, () => params[i++] ?? 'x');
        const key = `${route.method} ${route.path}`;
        const clean = Object.fromEntries(
          Object.entries(headers).filter(([, v]) => v !== undefined),
        ) as Record<string, string>;
        if (method === 'GET' || method === 'HEAD')
          return fc.constant({ method, path: path + query, headers: clean });
        return bodyFor(key, path).map((body) => ({
          method,
          path: path + query,
          headers: clean,
          ...(body === undefined ? {} : { body }),
        }));
      });
  });
}

/** The first chunk of a streamed answer (or '' once HANG_MS passes), then the stream is cancelled. */
async function firstChunk(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const first = await Promise.race([
    reader.read(),
    new Promise<{ value?: undefined }>((resolve) => setTimeout(() => resolve({}), HANG_MS).unref()),
  ]);
  await reader.cancel().catch(() => undefined);
  return first.value ? new TextDecoder().decode(first.value) : '';
}

// ---------- the run ----------

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    modules: allModules().map((m) =>
      m.name === 'ingress' ? ingressModule({ workers: false, secrets: () => undefined }) : m,
    ),
    config: {
      server: { body_limit_bytes: LIMIT },
      hooks: { approval_wait_seconds: 0 },
      approvals: { max_wait_seconds: 1 },
      signals: { permissions: { to_phone: false, wait_seconds: 1 } },
      sources: {
        github: { type: 'github', secret: GITHUB_SECRET },
        slack: { type: 'slack', secret: SLACK_SECRET },
        std: { type: 'standard-webhooks', secret: WHSEC },
        tg: { type: 'telegram', secret: 'tg_token-1' },
        gl: { type: 'gitlab', secret: 'gl-token-1' },
        mac: { type: 'hmac', secret: 'mac-secret', header: 'X-Signature' },
      },
    },
  });
});
afterAll(async () => t?.cleanup());

describe('the fuzz suite', () => {
  it(`answers ${COUNT} generated malformed requests over every route with no 5xx, no crash, no hang`, async () => {
    const seen = new Set<string>();
    const routes = t.app.routes
      .filter((r) => r.method !== 'ALL')
      .filter((r) => !seen.has(`${r.method} ${r.path}`) && seen.add(`${r.method} ${r.path}`));
    expect(routes.length).toBeGreaterThan(30);
    const requests = fc.sample(requestArb(routes), { numRuns: COUNT, seed: SEED });

    const byClass: Record<string, number> = {};
    const codes = new Map<string, number>();
    const perRoute = new Map<string, number>();
    const failures: string[] = [];
    const crashes: string[] = [];
    const onCrash = (err: unknown) => crashes.push(String(err));
    process.on('unhandledRejection', onCrash);
    process.on('uncaughtException', onCrash);
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const r = requests[i]!;
        const key = `${r.method} ${r.path.split('?')[0]}`;
        let status: number | string;
        try {
          const res = await Promise.race([
            t.app.request(r.path, {
              method: r.method,
              headers: r.headers,
              ...(r.body !== undefined ? { body: r.body } : {}),
            }),
            new Promise<'hang'>((resolve) => setTimeout(() => resolve('hang'), HANG_MS).unref()),
          ]);
          if (res === 'hang') status = 'hang';
          else {
            status = res.status;
            // A live stream (console updates, a streamed touch) is a legitimate answer that does not end:
            // its status and first bytes are what is checked, then it is cancelled, as a browser leaving does.
            const text = (res.headers.get('content-type') ?? '').includes('text/event-stream')
              ? await firstChunk(res)
              : await Promise.race([
                  res.text(),
                  new Promise<string>((resolve) => setTimeout(() => resolve('hang'), HANG_MS).unref()),
                ]);
            if (text === 'hang') status = 'hang';
            const code = /"code":"(\w+)"/.exec(text)?.[1] ?? String(res.status);
            codes.set(code, (codes.get(code) ?? 0) + 1);
            if (res.status >= 500)
              failures.push(`${status} ${key}: ${text.slice(0, 200)} body=${String(r.body).slice(0, 200)}`);
          }
        } catch (err) {
          status = 'crash';
          crashes.push(`${key}: ${(err as Error).stack ?? String(err)}`);
        }
        if (status === 'hang') failures.push(`hang ${key}`);
        const cls = typeof status === 'number' ? `${Math.floor(status / 100)}xx` : status;
        byClass[cls] = (byClass[cls] ?? 0) + 1;
        const route = routes.find(
          (x) =>
            x.method === r.method &&
            new RegExp(`^${x.path.replace(/:\w+/g, '[^/]*')}$`).test(r.path.split('?')[0]!),
        );
        if (route)
          perRoute.set(
            `${route.method} ${route.path}`,
            (perRoute.get(`${route.method} ${route.path}`) ?? 0) + 1,
          );
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;
    process.off('unhandledRejection', onCrash);
    process.off('uncaughtException', onCrash);

    const classes = Object.entries(byClass)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    console.log(
      `fuzz: ${requests.length} requests over ${routes.length} routes in ${seconds.toFixed(1)} s (seed ${SEED}): ${classes}; 5xx ${failures.filter((f) => /^5/.test(f)).length}, crashes ${crashes.length}, hangs ${byClass.hang ?? 0}`,
    );
    console.log(
      `fuzz answers by code: ${[...codes]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
    expect(failures.slice(0, 10)).toEqual([]);
    expect(crashes.slice(0, 5)).toEqual([]);
    // Every route was reached, each by a few dozen requests at least.
    for (const r of routes)
      expect(perRoute.get(`${r.method} ${r.path}`) ?? 0, `${r.method} ${r.path}`).toBeGreaterThan(20);
  }, 120_000); // ~4 s alone; a bound that a loaded machine cannot reach and a hang can
});
