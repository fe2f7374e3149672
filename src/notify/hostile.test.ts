import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LinkifyIt } from 'linkify-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import { type NtfyStandIn, ntfyStandIn } from '../channels/ntfy/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { type ScriptedReceiver, SECRET, startScriptedReceiver } from '../delivery/testing.js';
import { loopbackOnly } from '../egress/testing.js';
import { gateModule } from '../gate/module.js';
import { mcpModule } from '../mcp/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { foldForScan } from '../scan/normalize.js';
import { AWS_SECRET, DISGUISES, j, PROVIDER_TOKENS, WRITTEN_FORMS } from '../scan/testing.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { signalsModule } from '../signals/module.js';
import type { Dialect } from '../store/port.js';
import { dialects } from '../store/testing.js';
import { hostAllowed } from './content.js';
import { notifyModule } from './module.js';

/**
 * Hostile content end to end, as an agent that read a poisoned page would send it: a corpus of
 * canary secrets (every provider shape, in the forms people write them, disguised) and foreign links
 * goes in through `report_progress` (the MCP SDK client), `POST /v1/progress` and a Claude Code `Stop`
 * hook, and out through real deliveries to a signed-webhook receiver and a local ntfy. Asserted: no
 * canary is readable in anything delivered or in any text column of the database (the event log
 * included), and nothing delivered holds a clickable link off the allow-list.
 */

const ALLOWED = ['example.com'];
const fixture = (patch: Record<string, unknown>) =>
  JSON.stringify({
    ...JSON.parse(
      readFileSync(new URL('../runtimes/claude-code/fixtures/Stop.json', import.meta.url), 'utf8'),
    ),
    ...patch,
  });

/** The canaries: each a secret and the line that carries it. */
function canaries(): { secret: string; line: string }[] {
  const out: { secret: string; line: string }[] = [];
  PROVIDER_TOKENS.forEach(([, , token], i) => {
    const [, form] = WRITTEN_FORMS[i % WRITTEN_FORMS.length]!;
    const [, disguise] = DISGUISES[i % DISGUISES.length]!;
    const line = form.replaceAll('{i}', 'svc').replaceAll('{I}', 'SVC').replaceAll('{s}', disguise(token));
    out.push({ secret: token, line });
  });
  const aws = AWS_SECRET();
  out.push({ secret: aws, line: `aws_secret_access_key = ${aws}` });
  const aws2 = AWS_SECRET();
  out.push({
    secret: aws2,
    line: `export AWS_SECRET_ACCESS_KEY=${aws2.slice(0, 20)}\u200b${aws2.slice(20)}`,
  });
  out.push({
    secret: 'Tr0ub4dor3-pw',
    line: 'connect with postgres://app:Tr0ub4dor3-pw@db.internal:5432/app',
  });
  out.push({ secret: 'hunter2-canary', line: 'DB_PASSWORD: "hunter2-canary"' });
  return out;
}

const FOREIGN = [
  'log in at https://examp1e-login.com/reset',
  'open javascript:alert(document.cookie)',
  'see //evil.example/x',
  'go to evil.example/reset',
  'data:text/html;base64,PHNjcmlwdD4=',
  'https://ev\u200bil.com/x',
  '[click](https://evil.com/x)',
];

const eager = new LinkifyIt({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true });
function foreignClickable(text: string): string[] {
  const out: string[] = [];
  for (const v of [text, foldForScan(text)]) {
    for (const m of eager.match(v) ?? []) {
      let host: string | undefined;
      try {
        host = m.schema === 'mailto:' ? m.url.split('@').pop() : new URL(m.url).hostname;
      } catch {
        host = undefined;
      }
      if (!host || !hostAllowed(host, ALLOWED)) out.push(m.raw);
    }
    const runnable = /(?<![\w[])(?:javascript|vbscript|data|file)\s*:(?!\])/i.exec(v);
    if (runnable) out.push(runnable[0]);
  }
  return out;
}

/** Every string inside a JSON value. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

async function until(fn: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function textColumns(gw: TestGateway, dialect: Dialect): Promise<string[]> {
  const db = gw.gateway.services.db;
  const tables =
    dialect === 'sqlite'
      ? await db.query<{ name: string }>({ text: "SELECT name FROM sqlite_master WHERE type = 'table'" })
      : await db.query<{ name: string }>({
          text: 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()',
        });
  const out: string[] = [];
  for (const { name } of tables) {
    for (const row of await db.query<Record<string, unknown>>({ text: `SELECT * FROM "${name}"` })) {
      for (const v of Object.values(row)) if (typeof v === 'string') out.push(v);
    }
  }
  return out;
}

const RUNS: [Dialect, 'mask' | 'block'][] = (await dialects()).flatMap((d): [Dialect, 'mask' | 'block'][] =>
  d === 'sqlite'
    ? [
        [d, 'mask'],
        [d, 'block'],
      ]
    : [[d, 'mask']],
);

describe.each(RUNS)('hostile content through the gateway on %s, secrets: %s', (dialect, secrets) => {
  let rx: ScriptedReceiver;
  let phone: NtfyStandIn;
  let gw: TestGateway;
  let client: Client;
  const corpus = canaries();

  beforeAll(async () => {
    rx = await startScriptedReceiver({ secret: SECRET });
    rx.script = () => ({ kind: 'answer', status: 204 });
    phone = await ntfyStandIn();
    gw = await testGateway({
      dialect,
      config: {
        server: { public_url: 'https://switchboard.example.com' },
        auth: { keys: [{ name: 'bot', role: 'agent', key: KEYS.agent }] },
        channels: {
          hook: { type: 'webhook', url: `${rx.url}/hook`, secret_env: 'HOOK_SECRET' },
          phone: { type: 'ntfy', url: phone.url, topic: 'agents' },
        },
        routes: [{ match: 'true', channels: ['hook', 'phone'] }],
        egress: { allow: ['127.0.0.1'] },
        notify: {
          secrets,
          rate_per_minute: 0,
          // Every report must reach the channels to be checked: no hourly cap on the ~30 failures.
          priority_per_hour: 0,
          progress_merge_window_seconds: 0,
          allowed_link_domains: ALLOWED,
        },
      },
      modules: [
        coreModule(),
        deliveryModule({ env: { HOOK_SECRET: SECRET }, egress: { dial: loopbackOnly } }),
        approvalsModule(),
        gateModule(),
        runtimesModule(),
        notifyModule(),
        mcpModule(),
        signalsModule(),
      ],
    });
    client = new Client({ name: 'hostile-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', gw.gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${KEYS.agent}` } },
      }),
    );

    const post = (path: string, body: unknown) =>
      fetch(`${gw.gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.agent}` },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    for (const [i, { line }] of corpus.entries()) {
      const link = FOREIGN[i % FOREIGN.length]!;
      const text = `${line}\n${link}`;
      const short = line.length <= 100 ? line : `canary ${i}`;
      if (i % 3 === 0) {
        const r = await client.callTool({
          name: 'report_progress',
          arguments: {
            stage: 'failed',
            summary: short,
            detail: text,
            artifact: `https://evil.example/?t=${i}`,
          },
        });
        expect(r.isError, String(i)).toBeFalsy();
      } else if (i % 3 === 1) {
        const r = await post('/v1/progress', {
          stage: 'progress',
          summary: short,
          detail: text,
          artifact: link,
        });
        expect(r.status, String(i)).toBe(200);
      } else {
        const r = await post(
          '/v1/runtimes/claude-code/hooks',
          fixture({ session_id: `sess-${i}-${dialect}`, last_assistant_message: text }),
        );
        expect(r.status, String(i)).toBe(200);
      }
    }
    // Everything has gone out (or was refused) once no delivery is waiting and every Stop was reported.
    const db = gw.gateway.services.db;
    const stops = corpus.filter((_, i) => i % 3 === 2).length;
    await until(async () => {
      const reported = await gw.gateway.services.log.list({ type: 'agent.progress.reported', limit: 1000 });
      const open = await db.query<{ n: number }>({
        text: "SELECT COUNT(*) AS n FROM deliveries WHERE status IN ('pending', 'claimed')",
      });
      return reported.length >= corpus.length - stops + stops && Number(open[0]?.n ?? 0) === 0;
    });
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await rx?.close();
    await phone?.close();
  });

  // Readable means readable by a person too: whitespace a formatter put inside a token does not hide it.
  const bare = (t: string) => foldForScan(t).replace(/\s+/g, '');
  const readable = (texts: string[]) => {
    const all = texts.map(bare);
    return corpus.filter(({ secret }) => all.some((t) => t.includes(bare(secret))));
  };

  it('delivers no canary, readable or disguised, to any channel', () => {
    const delivered = [...rx.hits.map((h) => h.body), ...phone.published.flatMap(strings)];
    if (secrets === 'mask') expect(phone.published.length).toBeGreaterThanOrEqual(corpus.length);
    else expect(phone.published.map((p) => p.message)).toEqual([]);
    expect(readable(delivered).map((c) => c.line)).toEqual([]);
  });

  it('stores no canary in the event log or any other table', async () => {
    const stored = await textColumns(gw, dialect);
    expect(stored.length).toBeGreaterThan(corpus.length);
    expect(readable(stored).map((c) => c.line)).toEqual([]);
    const events = await gw.gateway.services.log.list({ limit: 5000 });
    expect(readable(events.map((e) => JSON.stringify(e.envelope))).map((c) => c.line)).toEqual([]);
  });

  it('delivers no clickable link off the allow-list', () => {
    const texts = [
      ...rx.hits.flatMap((h) => strings(JSON.parse(h.body))),
      ...phone.published.flatMap(strings),
    ].filter((t) => !t.startsWith('https://switchboard.example.com/'));
    const clickable = texts.flatMap(foreignClickable);
    expect(clickable).toEqual([]);
  });

  it('still says what happened: the masks and the defanged links are in the delivered text', () => {
    if (secrets === 'block') return;
    const delivered = phone.published.map((p) => String(p.message ?? '')).join('\n');
    expect(delivered).toContain('[redacted:');
    expect(delivered).toContain('hxxps://examp1e-login[.]com/reset');
    expect(j('a', 'b')).toBe('ab');
  });
});
