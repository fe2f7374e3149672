import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { notifyModule } from '../notify/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { parseConfig } from '../server/config.js';
import { coreModule } from '../server/core-routes.js';
import { type RunningServer, startServer } from '../server/serve.js';
import { KEYS } from '../server/testing.js';
import { freshStore, type TestStore } from '../store/testing.js';
import { waitFor } from '../tasks/testing.js';
import { telemetryModule } from './module.js';
import { tracing } from '../trace/span.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

/**
 * A local OTLP/HTTP collector: takes `POST /v1/traces` as OTLP JSON (what the exporter sends) and
 * answers like a collector (200 `{}`; 415 for another content type, 404 elsewhere).
 */
async function collector(): Promise<{ server: Server; url: string; spans: OtlpSpan[] }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      if (!req.headers['content-type']?.startsWith('application/json')) return void res.writeHead(415).end();
      const doc = JSON.parse(body) as {
        resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

/** A webhook channel's receiver that keeps each request's headers. */
async function webhookPeer(): Promise<{ server: Server; url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('OpenTelemetry traces', () => {
  let store: TestStore | undefined;
  let dataDir: string | undefined;
  let gateway: RunningServer | undefined;
  const servers: Server[] = [];
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await store?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  it('sends one trace of a hook → approval → notification, with parent links, continuing the caller’s traceparent', async () => {
    const otlp = await collector();
    const peer = await webhookPeer();
    servers.push(otlp.server, peer.server);
    store = await freshStore('sqlite');
    dataDir = mkdtempSync(join(tmpdir(), 'sb-otel-'));
    gateway = await startServer(
      parseConfig({
        data_dir: dataDir,
        server: { port: 0 },
        telemetry: { otlp_endpoint: `${otlp.url}/v1/traces` },
        rules: [
          {
            id: 'deploys-need-a-person',
            when: 'tool == "Bash" && input.command.startsWith("deploy")',
            decision: 'require_approval',
            reason_code: 'DEPLOY',
          },
        ],
        hooks: { approval_wait_seconds: 30 },
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
          ],
        },
        channels: { phone: { type: 'ntfy', url: `${peer.url}/ntfy`, topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        egress: { allow: ['127.0.0.1'] },
      }),
      {
        db: store.db,
        logger: pino({ level: 'silent' }),
        env: {},
        defaultMetrics: false,
        modules: [
          telemetryModule(),
          coreModule(),
          deliveryModule({ env: {} }),
          approvalsModule(),
          gateModule(),
          runtimesModule(),
          notifyModule(),
        ],
      },
    );
    expect(tracing()).toBe(true);
    const held = fetch(`${gateway.url}/v1/runtimes/claude-code/hooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${KEYS.agent}`,
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      },
      body: JSON.stringify({
        session_id: 'sess-otel',
        transcript_path: '/tmp/t.jsonl',
        cwd: '/home/dev/project',
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'deploy web' },
        tool_use_id: 'toolu_otel',
      }),
    });
    const approvalId = await waitFor(async () => {
      const res = await fetch(`${gateway!.url}/v1/approvals?state=pending`, {
        headers: { authorization: `Bearer ${KEYS.approver}` },
      });
      return ((await res.json()) as { approvals: { id: string }[] }).approvals[0]?.id;
    });
    // The approval's announcement went out to the webhook with the hook's trace.
    await waitFor(() => (peer.seen.length > 0 ? true : undefined));
    expect(peer.seen[0]!.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const decided = await fetch(`${gateway.url}/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.approver}` },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    expect((await held).status).toBe(200);
    // Stopping flushes the batch processor: every span reaches the collector.
    await gateway.stop();
    gateway = undefined;
    expect(tracing()).toBe(false);

    const trace = otlp.spans.filter((s) => s.traceId === CALLER_TRACE);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const root = trace.find((s) => s.parentSpanId === CALLER_SPAN)!;
    expect(root.name).toBe('POST /v1/runtimes/:runtime/hooks');
    const attr = (s: OtlpSpan, key: string) => s.attributes?.find((a) => a.key === key)?.value.stringValue;
    expect(attr(root, 'switchboard.session_id')).toBe('sess-otel');
    /** The names from a span up to the root, following parent links inside the trace. */
    const chain = (s: OtlpSpan): string[] => {
      const out = [s.name];
      let at = s;
      while (at.parentSpanId && byId.has(at.parentSpanId)) {
        at = byId.get(at.parentSpanId)!;
        out.push(at.name);
      }
      return out;
    };
    const names = trace.map((s) => s.name);
    for (const step of ['auth', 'gate.evaluate', 'log.append', 'delivery.attempt', 'channel.send'])
      expect(names).toContain(step);
    const send = trace.find((s) => s.name === 'channel.send')!;
    const path = chain(send);
    expect(path[0]).toBe('channel.send');
    expect(path[1]).toBe('delivery.attempt');
    expect(path.some((n) => n.startsWith('relay '))).toBe(true);
    expect(path.at(-1)).toBe(root.name);
    // The webhook got the traceparent of the attempt's own span.
    expect(peer.seen[0]!.traceparent).toContain(send.spanId);
  }, 60_000);

  it('loads no SDK and traces nothing without an endpoint', async () => {
    const peer = await webhookPeer();
    servers.push(peer.server);
    store = await freshStore('sqlite');
    dataDir = mkdtempSync(join(tmpdir(), 'sb-otel-'));
    gateway = await startServer(parseConfig({ data_dir: dataDir, server: { port: 0 } }), {
      db: store.db,
      logger: pino({ level: 'silent' }),
      env: {},
      defaultMetrics: false,
      modules: [telemetryModule(), coreModule()],
    });
    expect(tracing()).toBe(false);
    const res = await fetch(`${gateway.url}/healthz`, {
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    });
    expect(res.status).toBe(200);
  });
});
