import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auth, type TestApp, testApp } from '../../server/testing.js';
import { dialects } from '../../store/testing.js';
import { coreModule } from '../../server/core-routes.js';
import { RUNTIMES } from '../index.js';
import { runtimesModule } from '../module.js';
import type { Decision, RuntimeKind } from '../runtime.js';
import { afterWait, forAdapter } from './decision.js';
import { unavailableDecision } from './fail-closed.js';
import { FakeApprovals, FakeGate, approvalView, gateDecision } from './testing.js';
import { approvalsPort } from '../../approvals/port.js';
import { gatePort } from '../../gate/port.js';
import { tasksPort } from '../../tasks/port.js';

const fixture = (runtime: string, event: string) =>
  readFileSync(new URL(`../${runtime}/fixtures/${event}.json`, import.meta.url), 'utf8');

/** Every runtime's gating event, and whether the runtime itself calls the route (HTTP body form). */
const BLOCKING: Array<{ runtime: RuntimeKind; event: string; http: boolean }> = [
  { runtime: 'claude-code', event: 'PreToolUse', http: true },
  { runtime: 'claude-code', event: 'PermissionRequest', http: true },
  { runtime: 'codex', event: 'PreToolUse', http: false },
  { runtime: 'hermes', event: 'pre_tool_call', http: false },
  { runtime: 'openclaw', event: 'before_tool_call', http: true },
  { runtime: 'gemini-cli', event: 'BeforeTool', http: false },
  { runtime: 'cursor', event: 'beforeShellExecution', http: false },
  { runtime: 'cursor', event: 'preToolUse', http: false },
];

const WAIT_SECONDS = 1;

describe.each(await dialects())('POST /v1/runtimes/:runtime/hooks on %s', (dialect) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp({
      dialect,
      modules: [coreModule(), runtimesModule({ hooks: { approval_wait_seconds: WAIT_SECONDS } })],
    });
  });
  afterEach(async () => t.cleanup());

  const post = (runtime: string, body: string, headers: Record<string, string> = {}) =>
    t.app.request(`/v1/runtimes/${runtime}/hooks`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...auth('agent'), ...headers },
    });

  /** What the adapter says for this decision, in the form the route must answer with. */
  function expected(runtime: RuntimeKind, raw: string, d: Decision | null, http: boolean) {
    const adapter = RUNTIMES[runtime];
    const reply = adapter.reply(adapter.normalize(raw), d);
    return http ? reply.httpBody : { exitCode: reply.exitCode, stdout: reply.stdout, stderr: reply.stderr };
  }

  describe.each(BLOCKING)('$runtime $event', ({ runtime, event, http }) => {
    const raw = fixture(runtime, event);

    it.each(['allow', 'deny'] as const)('answers a gate %s with the native reply', async (kind) => {
      const decision = gateDecision(kind);
      t.provide(gatePort, new FakeGate(decision));
      const res = await post(runtime, raw);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(expected(runtime, raw, forAdapter(decision), http));
    });

    it('answers a modify with the rewrite, or the deny the runtime needs instead', async () => {
      const decision = gateDecision('modify', { input: { command: 'git push origin main' } });
      t.provide(gatePort, new FakeGate(decision));
      const res = await post(runtime, raw);
      expect(await res.json()).toEqual(expected(runtime, raw, forAdapter(decision), http));
    });

    it('holds a require_approval and answers allow once it is approved', async () => {
      const decision = gateDecision('require_approval', { approval_id: 'apr_01TEST' });
      const approved = approvalView('apr_01TEST', 'approved', {
        capability: { id: 'cap_01', expires_at: '2030-01-01T00:00:00Z', token: 't' },
      });
      t.provide(gatePort, new FakeGate(decision));
      const approvals = new FakeApprovals(approved, 30);
      t.provide(approvalsPort, approvals);
      const res = await post(runtime, raw);
      const body = await res.json();
      if (RUNTIMES[runtime].defaultTimeoutMs === null) {
        // An undocumented timeout is not held: the runtime gets its native ask at once.
        expect(approvals.waits).toEqual([]);
        expect(body).toEqual(expected(runtime, raw, forAdapter(decision), http));
        return;
      }
      expect(approvals.waits).toEqual([{ id: 'apr_01TEST', timeoutMs: WAIT_SECONDS * 1000 }]);
      const allow = afterWait(forAdapter(decision), approved);
      expect(allow.decision).toBe('allow');
      expect(body).toEqual(expected(runtime, raw, allow, http));
    });

    it('answers with the ask or a deny naming the approval when the hold times out', async () => {
      const decision = gateDecision('require_approval', { approval_id: 'apr_01WAIT' });
      t.provide(gatePort, new FakeGate(decision));
      t.provide(approvalsPort, new FakeApprovals(null));
      const res = await post(runtime, raw);
      const body = await res.json();
      expect(body).toEqual(expected(runtime, raw, forAdapter(decision), http));
    });

    it('denies with the comment when the approval is rejected', async () => {
      const decision = gateDecision('require_approval', { approval_id: 'apr_01REJ' });
      t.provide(gatePort, new FakeGate(decision));
      t.provide(
        approvalsPort,
        new FakeApprovals(approvalView('apr_01REJ', 'rejected', { comment: 'not on a Friday' })),
      );
      const body = await (await post(runtime, raw)).json();
      if (RUNTIMES[runtime].defaultTimeoutMs === null) return;
      expect(JSON.stringify(body)).toContain('not on a Friday');
      expect(body).toEqual(
        expected(
          runtime,
          raw,
          afterWait(
            forAdapter(decision),
            approvalView('apr_01REJ', 'rejected', { comment: 'not on a Friday' }),
          ),
          http,
        ),
      );
    });

    // Closed means the runtime's own desk dialog where it has one (its `ask`, or its neutral reply on a
    // permission prompt), its deny elsewhere: never what an allow would answer.
    const failedClosed = (body: unknown) => {
      const allow = expected(runtime, raw, forAdapter(gateDecision('allow')), http);
      expect(body).not.toEqual(allow);
      const ask = expected(
        runtime,
        raw,
        unavailableDecision('the policy gate is unavailable (no gate is running)'),
        http,
      );
      if (JSON.stringify(ask) !== '{}') expect(JSON.stringify(body)).toContain('GATE_UNAVAILABLE');
    };

    it('fails closed when no gate is running, naming GATE_UNAVAILABLE', async () => {
      const res = await post(runtime, raw);
      expect(res.status).toBe(200);
      failedClosed(await res.json());
      const denied = await t.services.log.list({ type: 'agent.tool.denied', limit: 10 });
      expect(denied).toHaveLength(1);
    });

    it('fails closed when the gate throws', async () => {
      t.provide(gatePort, new FakeGate(new Error('policy store unreachable')));
      failedClosed(await (await post(runtime, raw)).json());
    });
  });

  it('lets a read-only tool through when no gate is running', async () => {
    const raw = JSON.stringify({
      hook_event_name: 'PreToolUse',
      session_id: 's1',
      tool_name: 'Read',
      tool_input: { file_path: '/repo/README.md' },
    });
    const res = await post('claude-code', raw);
    expect(await res.json()).toEqual({});
    expect(await t.services.log.list({ type: 'agent.tool.authorized', limit: 10 })).toHaveLength(1);
  });

  it('gives the bridge the whole native reply when it sends the bridge header', async () => {
    t.provide(gatePort, new FakeGate(gateDecision('deny')));
    const raw = fixture('claude-code', 'PreToolUse');
    const res = await post('claude-code', raw, { 'x-switchboard-bridge': '1' });
    const body = (await res.json()) as { exitCode: number };
    expect(body).toEqual(expected('claude-code', raw, forAdapter(gateDecision('deny')), false));
    expect(body.exitCode).toBe(0);
  });

  it('holds an approval for less than the bridge says it will wait', async () => {
    t.provide(gatePort, new FakeGate(gateDecision('require_approval', { approval_id: 'apr_01DL' })));
    const approvals = new FakeApprovals(null);
    t.provide(approvalsPort, approvals);
    await post('codex', fixture('codex', 'PreToolUse'), { 'x-switchboard-deadline-ms': '2500' });
    expect(approvals.waits[0]?.timeoutMs).toBe(500);
  });

  it('records the envelope with the runtime, session, task and a vault reference, and asks with them', async () => {
    const gate = new FakeGate(gateDecision('allow'));
    t.provide(gatePort, gate);
    await post('claude-code', fixture('claude-code', 'PreToolUse'));
    const [event] = await t.services.log.list({ type: 'agent.tool.requested', limit: 10 });
    const env = event!.envelope;
    expect(env.runtime.kind).toBe('claude-code');
    expect(env.execution.session_id).toBeTruthy();
    expect(env.payload_ref).toMatch(/^vault:\/\//);
    expect(gate.calls[0]?.intent).toMatchObject({
      runtime: 'claude-code',
      event_type: 'agent.tool.requested',
    });
    // The real gate appends the hook's event inside its decision transaction; this fake does not, so
    // the route records it on its own after the decision.
    expect(typeof gate.calls[0]?.ctx.record).toBe('function');
    const raw = await t.services.vault.get(env.payload_ref!);
    expect(raw?.toString()).toBe(fixture('claude-code', 'PreToolUse'));
  });

  it('takes the task from a task-scoped key and touches the task', async () => {
    t.services.keys.add('task-key-0123456789abcdef', { name: 'launched', role: 'agent', task_id: 'tsk_01T' });
    const touched: unknown[] = [];
    t.provide(tasksPort, {
      touch: async (id, opts) => {
        touched.push({ id, ...opts });
      },
      launch: async () => {
        throw new Error('unused');
      },
      get: async () => undefined,
      resume: async () => {
        throw new Error('unused');
      },
    });
    const gate = new FakeGate(gateDecision('allow'));
    t.provide(gatePort, gate);
    const raw = fixture('claude-code', 'PreToolUse');
    await t.app.request('/v1/runtimes/claude-code/hooks', {
      method: 'POST',
      body: raw,
      headers: { authorization: 'Bearer task-key-0123456789abcdef' },
    });
    expect(touched).toEqual([
      { id: 'tsk_01T', step: true, session_id: JSON.parse(raw).session_id, runtime: 'claude-code' },
    ]);
    expect(gate.calls[0]?.intent.task_id).toBe('tsk_01T');
    const [event] = await t.services.log.list({ type: 'agent.tool.requested', limit: 1 });
    expect(event!.envelope.execution.task_id).toBe('tsk_01T');
  });

  it('records an observe-only event and answers neutrally without asking the gate', async () => {
    const gate = new FakeGate(gateDecision('deny'));
    t.provide(gatePort, gate);
    const res = await post('claude-code', fixture('claude-code', 'PostToolUse'));
    expect(await res.json()).toEqual({});
    expect(gate.calls).toHaveLength(0);
    expect(await t.services.log.list({ type: 'agent.tool.completed', limit: 10 })).toHaveLength(1);
  });

  it('keeps an unknown event as agent.runtime.unrecognized and answers neutrally', async () => {
    const res = await post('codex', JSON.stringify({ hook_event_name: 'SomethingNew', x: 1 }));
    expect(await res.json()).toEqual({ exitCode: 0, stdout: '{}', stderr: '' });
    expect(await t.services.log.list({ type: 'agent.runtime.unrecognized', limit: 10 })).toHaveLength(1);
  });

  it('answers malformed JSON with the runtime native error and 400', async () => {
    const cc = await post('claude-code', '{"hook_event_name":');
    expect(cc.status).toBe(400);
    expect(await cc.json()).toMatchObject({ exitCode: 2, stdout: '' });
    const oc = await post('openclaw', 'not json');
    expect(oc.status).toBe(400);
    expect(await oc.json()).toMatchObject({ block: true });
    expect(await t.services.log.list({ type: 'agent.runtime.unrecognized', limit: 10 })).toHaveLength(2);
  });

  it('answers a JSON value that is not an object with the native error', async () => {
    const res = await post('hermes', '[1,2,3]');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { exitCode: number }).exitCode).toBe(2);
  });

  it('refuses an unknown runtime with 404', async () => {
    for (const name of ['nope', 'constructor', '__proto__']) {
      const res = await post(name, fixture('claude-code', 'PreToolUse'));
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });

  it('refuses a body over the limit with 413 and records nothing', async () => {
    const big = JSON.stringify({
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { content: 'x'.repeat(t.config.server.body_limit_bytes) },
    });
    const res = await post('claude-code', big);
    expect(res.status).toBe(413);
    expect(await t.services.log.list({ limit: 10 })).toHaveLength(0);
  });

  it('refuses a missing key with 401 and a non-agent key with 403', async () => {
    const raw = fixture('claude-code', 'PreToolUse');
    const none = await t.app.request('/v1/runtimes/claude-code/hooks', { method: 'POST', body: raw });
    expect(none.status).toBe(401);
    for (const role of ['approver', 'admin'] as const) {
      const res = await t.app.request('/v1/runtimes/claude-code/hooks', {
        method: 'POST',
        body: raw,
        headers: auth(role),
      });
      expect(res.status).toBe(403);
    }
  });
});

describe('GET /v1/runtimes', () => {
  it('serves the capability rows to any valid key and refuses anyone else', async () => {
    const t = await testApp({ modules: [coreModule(), runtimesModule()] });
    try {
      for (const role of ['agent', 'approver', 'admin'] as const) {
        const res = await t.app.request('/v1/runtimes', { headers: auth(role) });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { runtimes: Array<{ runtime: string; event: string }> };
        expect(body.runtimes).toContainEqual(
          expect.objectContaining({ runtime: 'codex', event: 'PreToolUse' }),
        );
        expect(new Set(body.runtimes.map((r) => r.runtime)).size).toBe(6);
      }
      expect((await t.app.request('/v1/runtimes')).status).toBe(401);
    } finally {
      await t.cleanup();
    }
  });
});
