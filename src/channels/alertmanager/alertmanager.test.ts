import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { alertmanager } from './index.js';

const alert = (r: HttpRequest) =>
  JSON.parse(r.body)[0] as { labels: Record<string, string>; annotations: Record<string, string> };

channelCase({
  kind: alertmanager,
  rawConfig: { type: 'alertmanager', url: 'http://alertmanager.internal:9093', labels: { team: 'platform' } },
  secrets: {},
  text: (r) => alert(r).annotations['description'] ?? '',
  wire: (r) => r.body,
  responses: {
    ok: response(200, ''),
    business: response(400, { code: 400, message: 'start time must be before end time' }),
    businessExpect: 'dead',
    rateLimited: response(429, 'slow down'),
    serverError: response(503, 'unavailable'),
  },
});

/** What `POST /api/v2/alerts` validates (openapi.yaml postableAlerts): an array, labels with alertname, RFC 3339 times, start ≤ end. */
function alertmanagerServer(req: ReceivedRequest): Answer {
  if (req.url !== '/api/v2/alerts') return { status: 404, body: 'Not Found' };
  const alerts = JSON.parse(req.body) as {
    labels?: Record<string, string>;
    startsAt?: string;
    endsAt?: string;
    generatorURL?: string;
  }[];
  if (!Array.isArray(alerts))
    return json(400, { code: 602, message: 'alerts in body must be of type array' });
  for (const a of alerts) {
    if (!a.labels || Object.keys(a.labels).length === 0)
      return json(400, { code: 400, message: 'at least one label pair required' });
    if (!Object.keys(a.labels).every((k) => /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k)))
      return json(400, { code: 400, message: 'invalid label set' });
    const start = Date.parse(a.startsAt ?? '');
    const end = Date.parse(a.endsAt ?? '');
    if (Number.isNaN(start) || Number.isNaN(end) || end < start)
      return json(400, { code: 400, message: 'start time must be before end time' });
    if (a.generatorURL !== undefined && !URL.canParse(a.generatorURL))
      return json(422, { code: 601, message: 'generatorURL must be a uri' });
  }
  return { status: 200, body: '' };
}

describe('Alertmanager against a local stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());

  it('posts one alert with alertname, severity, stage and task labels and an expiry', async () => {
    rx = await startReceiver(alertmanagerServer);
    const config = alertmanager.configSchema.parse({
      type: 'alertmanager',
      url: rx.url,
      labels: { team: 'platform' },
    });
    const now = Date.UTC(2026, 0, 1);
    expect(
      await alertmanager.send(sampleMessage({ severity: 'critical' }), config, {
        post: fetchPost,
        now: () => now,
        secret: () => undefined,
      }),
    ).toEqual({ kind: 'ok' });
    const [sent] = JSON.parse(rx.requests[0]?.body ?? '[]');
    expect(sent.labels).toEqual({
      team: 'platform',
      alertname: 'SwitchboardNotification',
      severity: 'critical',
      stage: 'failed',
      kind: 'progress',
      task_id: 'tsk_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
      agent: 'claude-code',
    });
    expect([sent.startsAt, sent.endsAt]).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T01:00:00.000Z']);
  });

  it('rejects a static label whose name Prometheus would refuse', () => {
    expect(
      alertmanager.configSchema.safeParse({
        type: 'alertmanager',
        url: 'http://a:9093',
        labels: { 'bad-name': 'x' },
      }).success,
    ).toBe(false);
  });
});

const BINARY = '/usr/bin/prometheus-alertmanager';
// CI installs the Debian package and sets this, so a missing binary fails there instead of skipping.
if (!existsSync(BINARY) && process.env.SWITCHBOARD_REQUIRE_ALERTMANAGER === '1')
  throw new Error(
    `${BINARY} is required (SWITCHBOARD_REQUIRE_ALERTMANAGER=1): apt-get install prometheus-alertmanager`,
  );

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe.skipIf(!existsSync(BINARY))('Alertmanager against the real prometheus-alertmanager', () => {
  let child: ChildProcess | undefined;
  let dir = '';
  let base = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-am-'));
    writeFileSync(join(dir, 'am.yml'), "route:\n  receiver: 'null'\nreceivers:\n  - name: 'null'\n");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(
      BINARY,
      [
        `--config.file=${join(dir, 'am.yml')}`,
        `--storage.path=${dir}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      const ready = await fetch(`${base}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('prometheus-alertmanager did not become ready in 10 s');
  });

  afterAll(async () => {
    // Alertmanager writes its snapshots as it stops: remove its directory once it has exited (a CI run
    // failed with ENOTEMPTY when the two raced), and retry the removal for a writer still closing.
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });

  it('accepts the alert and lists it back with its labels and annotations', async () => {
    const config = alertmanager.configSchema.parse({
      type: 'alertmanager',
      url: base,
      labels: { team: 'platform' },
    });
    const msg = approvalMessage({ severity: 'critical', locale: 'zh' });
    expect(
      await alertmanager.send(msg, config, { post: fetchPost, now: Date.now, secret: () => undefined }),
    ).toEqual({ kind: 'ok' });
    const listed = (await (await fetch(`${base}/api/v2/alerts?filter=team%3D%22platform%22`)).json()) as {
      labels: Record<string, string>;
      annotations: Record<string, string>;
      status: { state: string };
    }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]?.labels).toMatchObject({
      alertname: 'SwitchboardNotification',
      severity: 'critical',
      stage: 'awaiting_approval',
    });
    expect(listed[0]?.annotations['approval_page']).toBe(
      'https://sb.example/console/approvals/apr_01JDZ3R5W8XK2M4N6P8Q0S2T4V',
    );
    expect(listed[0]?.annotations['title']).toBe('等待审批 · Run the production migration');
  });

  it('reports an alert it refuses (end before start) as dead', async () => {
    const config = alertmanager.configSchema.parse({ type: 'alertmanager', url: base });
    const badPost = (req: HttpRequest) => {
      const [a] = JSON.parse(req.body);
      a.endsAt = '2000-01-01T00:00:00Z';
      return fetchPost({ ...req, body: JSON.stringify([a]) });
    };
    const res = await alertmanager.send(sampleMessage(), config, {
      post: badPost,
      now: Date.now,
      secret: () => undefined,
    });
    expect(res.kind).toBe('dead');
  });
});

if (!existsSync(BINARY)) {
  console.warn(
    `skipping the real Alertmanager test: ${BINARY} is not installed (Debian package prometheus-alertmanager)`,
  );
}
