import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/index.js';
import { type Receiver, json, startReceiver } from '../channels/testing.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { notifyModule } from '../notify/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS, type TestGateway, testGateway } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { runAppServerBridge } from './app-server.js';

// biome-ignore lint/suspicious/noExplicitAny: reads of recorded protocol JSON in assertions
type J = any;

const FIXTURES = fileURLToPath(new URL('../runtimes/codex/fixtures/app-server/', import.meta.url));
const FAKE = join(FIXTURES, 'fake-app-server.mjs');

/** The client's side of one recorded session: its lines, in order. */
const clientLines = (fixture: string) =>
  readFileSync(join(FIXTURES, fixture), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { from: string; message: Record<string, unknown> })
    .filter((e) => e.from === 'client' && !(e.message.id !== undefined && e.message.method === undefined))
    .map((e) => JSON.stringify(e.message));

interface Session {
  code: number;
  /** What the client received, parsed. */
  received: Record<string, unknown>[];
  /** What the server received from the bridge or the client, parsed. */
  server: Record<string, unknown>[];
  errors: string;
}

describe.each(await dialects())('switchboard codex-app-server against a real gateway on %s', (dialect) => {
  let gw: TestGateway;
  let phone: Receiver;
  let dir: string;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-app-server-'));
    phone = await startReceiver(() => json(200, { id: 'ntfy1', event: 'message' }));
    gw = await testGateway({
      dialect,
      config: {
        auth: {
          keys: [
            { name: 'codex', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
            { name: 'ops', role: 'admin', key: KEYS.admin },
          ],
        },
        rules: [
          {
            id: 'no-rm-rf',
            when: 'tool == "Bash" && input.command.contains("rm -rf")',
            decision: 'deny',
            reason_code: 'NO_RM_RF',
          },
          {
            id: 'deploys-ask',
            when: 'tool == "Bash" && input.command.contains("deploy")',
            decision: 'require_approval',
            reason_code: 'DEPLOY',
          },
          {
            id: 'tests-run',
            when: 'tool == "Bash" && input.command == "npm test"',
            decision: 'allow',
            reason_code: 'TESTS',
          },
        ],
        channels: { phone: { type: 'ntfy', url: phone.url, topic: 'agents' } },
        routes: [{ match: 'true', channels: ['phone'] }],
        egress: { allow: ['127.0.0.1'] },
      },
      modules: [
        coreModule(),
        deliveryModule({ env: {} }),
        approvalsModule({ expiryWorker: false }),
        gateModule({ watch: false, sighup: false }),
        runtimesModule(),
        notifyModule(),
      ],
      publicUrl: true,
    });
    url = gw.gateway.url;
  });
  afterAll(async () => {
    await gw?.stop();
    await phone?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * One session: the fake server replays the fixture, the test plays the client's recorded lines,
   * and `onRequest` answers what the bridge forwards to the client.
   */
  async function session(
    fixture: string,
    opts: { onRequest?: (msg: Record<string, unknown>) => unknown; gateway?: string } = {},
  ): Promise<Session> {
    const log = join(dir, `${fixture}-${Math.random().toString(36).slice(2)}.log`);
    const input = new PassThrough();
    const output = new PassThrough();
    const errors = new PassThrough();
    const received: Record<string, unknown>[] = [];
    let errText = '';
    errors.on('data', (d: Buffer) => {
      errText += d.toString();
    });
    let buffered = '';
    output.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        const msg = JSON.parse(buffered.slice(0, i)) as Record<string, unknown>;
        buffered = buffered.slice(i + 1);
        received.push(msg);
        if (msg.id !== undefined && typeof msg.method === 'string' && opts.onRequest) {
          input.write(`${JSON.stringify({ id: msg.id, result: opts.onRequest(msg) })}\n`);
        }
      }
    });
    for (const line of clientLines(fixture)) input.write(`${line}\n`);
    const code = await runAppServerBridge({
      command: [process.execPath, FAKE, join(FIXTURES, fixture)],
      settings: { url: opts.gateway ?? url, key: KEYS.agent, timeoutMs: 30_000, fail: 'closed' },
      input,
      output,
      errors,
      env: { PATH: process.env.PATH ?? '', FAKE_APP_SERVER_LOG: log },
    });
    input.end();
    const server = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    rmSync(log, { force: true });
    return { code, received, server, errors: errText };
  }

  const answerTo = (s: Session, id: number) =>
    s.server.find((m) => m.id === id && m.method === undefined)?.result as { decision?: unknown } | undefined;

  async function events(type: string) {
    const res = await fetch(`${url}/v1/events?type=${encodeURIComponent(type)}&limit=1000`, {
      headers: { authorization: `Bearer ${KEYS.admin}` },
    });
    return ((await res.json()) as { events: J[] }).events;
  }

  it('declines a command the policy denies; the client never sees the request, the turn goes on', async () => {
    const s = await session('command-rm.jsonl');
    expect(s.code).toBe(0);
    expect(answerTo(s, 0)).toEqual({ decision: 'decline' });
    expect(s.received.some((m) => m.method === 'item/commandExecution/requestApproval')).toBe(false);
    expect(s.errors).toContain('declined item/commandExecution/requestApproval');
    // Everything else passed through, in order: responses, deltas, the declined item, the turn's end.
    expect(s.received.map((m) => m.method ?? `#${String(m.id)}`).slice(0, 4)).toEqual([
      '#0',
      '#1',
      'thread/started',
      '#2',
    ]);
    const done = s.received.find(
      (m) => m.method === 'item/completed' && (m.params as J).item.type === 'commandExecution',
    );
    expect((done?.params as J)?.item.status).toBe('declined');
    expect(s.received.at(-1)?.method).toBe('turn/completed');

    const thread = '019ad7c1-3f0e-7a42-9b1d-6c2e8f4a1b01';
    const asked = (await events('agent.permission.requested')).find((e) => e.execution.session_id === thread);
    expect(asked?.subject.tool).toBe('Bash');
    expect(asked?.runtime.kind).toBe('codex');
    const denied = (await events('agent.tool.denied')).find((e) => e.execution.session_id === thread);
    expect(denied?.redacted_summary.reason_code ?? denied?.policy).toBeDefined();
    // The observations: session, tool failed (declined), turn completed; deltas are not posted.
    await expect
      .poll(async () => (await events('agent.turn.completed')).some((e) => e.execution.session_id === thread))
      .toBe(true);
    expect((await events('agent.session.started')).some((e) => e.execution.session_id === thread)).toBe(true);
    const failed = (await events('agent.tool.failed')).find((e) => e.execution.session_id === thread);
    expect(failed?.execution.tool_call_id).toBe('call_QmZ1rT7xWv2LqN8b');
  }, 60_000);

  it('accepts a command a rule allows, without asking anyone', async () => {
    const s = await session('command-test.jsonl');
    expect(answerTo(s, 0)).toEqual({ decision: 'accept' });
    expect(s.received.some((m) => m.method === 'item/commandExecution/requestApproval')).toBe(false);
    const done = s.received.find(
      (m) => m.method === 'item/completed' && (m.params as J).item.type === 'commandExecution',
    );
    expect((done?.params as J)?.item.exitCode).toBe(0);
  }, 60_000);

  it('holds the turn while the phone decides a require_approval: approved → accept', async () => {
    const running = session('command-deploy.jsonl');
    const approvalId = await expect
      .poll(
        async () => {
          const res = await fetch(`${url}/v1/approvals?state=pending`, {
            headers: { authorization: `Bearer ${KEYS.approver}` },
          });
          return ((await res.json()) as { approvals: { id: string }[] }).approvals[0]?.id;
        },
        { timeout: 20_000 },
      )
      .toMatch(/^apr_/)
      .then(async () => {
        const res = await fetch(`${url}/v1/approvals?state=pending`, {
          headers: { authorization: `Bearer ${KEYS.approver}` },
        });
        return ((await res.json()) as { approvals: { id: string }[] }).approvals[0]!.id;
      });
    // The phone got the approval, with its id.
    await expect
      .poll(() => phone.requests.some((r) => r.body.includes(approvalId)), { timeout: 20_000 })
      .toBe(true);
    const decided = await fetch(`${url}/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.approver}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    const s = await running;
    expect(answerTo(s, 0)).toEqual({ decision: 'accept' });
    expect(s.received.at(-1)?.method).toBe('turn/completed');
  }, 60_000);

  it('leaves a request no rule decides to the client, with the diff from item/started in the intent', async () => {
    const s = await session('file-change.jsonl', { onRequest: () => ({ decision: 'decline' }) });
    const forwarded = s.received.find((m) => m.method === 'item/fileChange/requestApproval');
    expect(forwarded?.id).toBe(0);
    // The client's own answer reached the server unchanged.
    expect(answerTo(s, 0)).toEqual({ decision: 'decline' });
    const asked = (await events('agent.permission.requested')).find(
      (e) => e.execution.session_id === '019ad7c1-3f0e-7a42-9b1d-6c2e8f4a1b04',
    );
    expect(asked?.subject.tool).toBe('apply_patch');
  }, 60_000);

  it('leaves the request to the client when the gateway cannot be reached, as a permission prompt falls back to the desk', async () => {
    // A port that was just free: connections are refused at once.
    const closed = await startReceiver(() => json(200, {}));
    const dead = closed.url;
    await closed.close();
    const s = await session('command-test.jsonl', {
      gateway: dead,
      onRequest: () => ({ decision: 'decline' }),
    });
    expect(s.received.some((m) => m.method === 'item/commandExecution/requestApproval')).toBe(true);
    expect(answerTo(s, 0)).toEqual({ decision: 'decline' });
    expect(s.code).toBe(0);
  }, 60_000);
});
