import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import type { GateDecision } from '../gate/port.js';
import { planDigest } from '../envelope/plan.js';
import { type GateHarness, gateHarness } from './service/testing.js';

const RULES = [
  {
    id: 'no-force-push',
    match: { tools: ['Bash'] },
    when: 'input.command.contains("push --force")',
    decision: 'deny',
    reason_code: 'FORCE_PUSH',
  },
  {
    id: 'deploy',
    match: { tools: ['Bash'] },
    when: 'input.command.startsWith("deploy")',
    decision: 'require_approval',
    reason_code: 'DEPLOY',
  },
  {
    id: 'later',
    match: { tools: ['Bash'] },
    when: 'input.command == "later"',
    decision: 'defer',
    reason_code: 'LATER',
  },
  {
    id: 'no-bg',
    match: { tools: ['Bash'] },
    when: 'has(input.run_in_background)',
    decision: 'modify',
    reason_code: 'NO_BACKGROUND',
    input: { run_in_background: null },
  },
  {
    id: 'ls-ok',
    match: { tools: ['Bash'] },
    when: 'input.command == "ls"',
    decision: 'allow',
    reason_code: 'LS_OK',
    constraints: { network: 'none' },
  },
  { id: 'loop', when: 'task.steps > 3', decision: 'deny', reason_code: 'TOO_MANY_STEPS', priority: 10 },
];

type Types = string[];

describe.each(await dialects())('the gate module on %s', (dialect) => {
  let h: GateHarness;
  afterEach(async () => {
    await h?.cleanup();
  });
  const start = async (rules: unknown[] = RULES) => {
    h = await gateHarness(dialect, { config: { rules } });
  };
  const decide = async (
    body: Record<string, unknown>,
    role: Parameters<GateHarness['post']>[2] = 'agent',
  ) => {
    const res = await h.post('/v1/gate/evaluate', body, role);
    expect(res.status).toBe(200);
    return (await res.json()) as GateDecision;
  };
  const types = async (): Promise<Types> => {
    const rows = await h.t.services.db.query<{ type: string }>({
      text: 'SELECT type FROM events ORDER BY seq',
    });
    return rows.map((r) => r.type);
  };
  const summaries = async (type: string) => {
    const rows = await h.t.services.db.query<{ body: string }>({
      text: 'SELECT body FROM events WHERE type = $1 ORDER BY seq',
      values: [type],
    });
    return rows.map(
      (r) => JSON.parse(r.body) as Record<string, unknown> & { redacted_summary: Record<string, unknown> },
    );
  };

  it('allows with a capability, records requested, authorized and issued, and keeps the input out of the log', async () => {
    await start();
    const d = await decide({ tool: 'Bash', input: { command: 'ls' } });
    expect(d).toMatchObject({ decision: 'allow', reason_code: 'LS_OK', constraints: { network: 'none' } });
    expect(d.policy_revision).toMatch(/^rev_[0-9a-f]{16}$/);
    expect(d.plan_digest).toBe(planDigest({ tool: 'Bash', input: { command: 'ls' } }));
    expect(d.capability?.id).toMatch(/^cap_/);
    expect(d.matched_rules).toEqual([{ id: 'ls-ok', decision: 'allow' }]);
    const t = await types();
    expect(t).toEqual(
      expect.arrayContaining(['agent.policy.loaded', 'agent.tool.requested', 'agent.tool.authorized']),
    );
    // The capability is folded into the decision (docs/envelope.md): no event of its own.
    expect(t).not.toContain('agent.capability.issued');
    const [req] = await summaries('agent.tool.requested');
    expect(req?.payload_ref).toMatch(/^vault:\/\//);
    expect(JSON.stringify(await summaries('agent.tool.authorized'))).not.toContain('"ls"');
    const [auth] = await summaries('agent.tool.authorized');
    expect(auth?.causation_id).toBe(req?.event_id);
    expect(auth?.redacted_summary).toMatchObject({
      plan_digest: d.plan_digest,
      matched_rules: d.matched_rules,
      capability_id: d.capability?.id,
      capability_expires_at: d.capability?.expires_at,
    });
    expect(JSON.stringify(await summaries('agent.tool.authorized'))).not.toContain(d.capability!.token);
  });

  it('denies, defers and merges deny over every other match', async () => {
    await start();
    expect(await decide({ tool: 'Bash', input: { command: 'later' } })).toMatchObject({
      decision: 'defer',
      reason_code: 'LATER',
    });
    const d = await decide({
      tool: 'Bash',
      input: { command: 'deploy && git push --force', run_in_background: true },
    });
    expect(d).toMatchObject({ decision: 'deny', reason_code: 'FORCE_PUSH' });
    expect(d.matched_rules.map((m) => m.id)).toEqual(['no-force-push', 'deploy', 'no-bg']);
    expect(d.capability).toBeUndefined();
    expect(await types()).toEqual(expect.arrayContaining(['agent.tool.deferred', 'agent.tool.denied']));
  });

  it('modifies the input, binds the capability to the replacement and logs original and replacement in the vault', async () => {
    await start();
    const d = await decide({ tool: 'Bash', input: { command: 'npm test', run_in_background: true } });
    expect(d).toMatchObject({
      decision: 'modify',
      reason_code: 'NO_BACKGROUND',
      input: { command: 'npm test' },
    });
    expect(d.plan_digest).toBe(planDigest({ tool: 'Bash', input: { command: 'npm test' } }));
    const [m] = await summaries('agent.tool.modified');
    expect(m?.redacted_summary).toMatchObject({ rule_id: 'no-bg', changed_keys: ['run_in_background'] });
    const stored = await h.t.services.vault.get(m!.payload_ref as string);
    expect(JSON.parse(stored!.toString())).toEqual({
      original: { command: 'npm test', run_in_background: true },
      replacement: { command: 'npm test' },
    });
  });

  it('asks for approval, and the approved plan yields a capability that verifies against that plan', async () => {
    await start();
    const input = { command: 'deploy prod' };
    const d = await decide({ tool: 'Bash', input });
    expect(d).toMatchObject({ decision: 'require_approval', reason_code: 'DEPLOY' });
    expect(d.approval_id).toMatch(/^apr_/);
    expect(d.capability).toBeUndefined();
    const denied = await h.post(`/v1/approvals/${d.approval_id}/decision`, { decision: 'approve' }, 'agent');
    expect(denied.status).toBe(403);
    const ok = await h.post(`/v1/approvals/${d.approval_id}/decision`, { decision: 'approve' }, 'approver');
    expect(ok.status).toBe(200);
    const view = (await (await h.get(`/v1/approvals/${d.approval_id}`, 'approver')).json()) as {
      status: string;
      capability?: { token: string };
    };
    expect(view.status).toBe('approved');
    expect(view.capability?.token).toBeTruthy();
    const v = await h.post('/v1/capabilities/verify', {
      token: view.capability!.token,
      plan: { tool: 'Bash', input },
    });
    expect(await v.json()).toMatchObject({ valid: true, claims: { plan_digest: d.plan_digest } });
    const other = await h.post('/v1/capabilities/verify', {
      token: view.capability!.token,
      plan: { tool: 'Bash', input: { command: 'deploy staging' } },
    });
    expect(await other.json()).toEqual({ valid: false, reason: 'PLAN_MISMATCH' });
    const [recheck] = await summaries('agent.tool.authorized');
    expect(recheck?.redacted_summary).toMatchObject({
      reason_code: 'APPROVED',
      approved_plan_digest: d.plan_digest,
    });
  });

  it('denies APPROVALS_UNAVAILABLE when no approvals module runs', async () => {
    h = await gateHarness(dialect, { config: { rules: RULES }, approvals: false });
    expect(await decide({ tool: 'Bash', input: { command: 'deploy prod' } })).toMatchObject({
      decision: 'deny',
      reason_code: 'APPROVALS_UNAVAILABLE',
    });
  });

  it('stops a loop on the fourth call of a task with a task.steps rule', async () => {
    await start();
    const { task_id, headers } = h.taskKey();
    const got: string[] = [];
    for (let i = 0; i < 5; i++)
      got.push((await decide({ tool: 'Read', input: { file_path: `/f${i}` } }, headers)).decision);
    expect(got).toEqual(['allow', 'allow', 'allow', 'deny', 'deny']);
    expect(h.steps.get(task_id)).toBe(5);
    const d = await decide({ tool: 'Read', input: { file_path: '/x' }, task_id }, headers);
    expect(d).toMatchObject({ reason_code: 'TOO_MANY_STEPS' });
  });

  it('sees wall time as task.wall_time_seconds', async () => {
    await start([
      { id: 'slow', when: 'task.wall_time_seconds >= 60', decision: 'deny', reason_code: 'TOO_LONG' },
    ]);
    const { headers } = h.taskKey();
    expect((await decide({ tool: 'Read', input: {} }, headers)).decision).toBe('allow');
    h.clock.now += 61_000;
    expect((await decide({ tool: 'Read', input: {} }, headers)).reason_code).toBe('TOO_LONG');
  });

  it('refuses with 403 a task-bound key that names another task', async () => {
    await start();
    const { headers } = h.taskKey();
    const other = h.taskKey();
    const res = await h.post(
      '/v1/gate/evaluate',
      { tool: 'Read', input: {}, task_id: other.task_id },
      headers,
    );
    expect(res.status).toBe(403);
  });

  it('answers 400, 413, 415, 401 and 403 for bad input and wrong keys on evaluate', async () => {
    await start();
    const post = (body: unknown, role: Parameters<GateHarness['post']>[2] = 'agent') =>
      h.post('/v1/gate/evaluate', body, role);
    expect((await post('{not json')).status).toBe(400);
    expect((await post({ tool: 'Bash' })).status).toBe(400);
    expect((await post({ tool: 7, input: {} })).status).toBe(400);
    expect((await post({ tool: 'Bash', input: [] })).status).toBe(400);
    expect((await post({ tool: 'Bash', input: {}, extra: 1 })).status).toBe(400);
    expect((await post({ tool: 'Bash', input: {}, runtime: 'vim' })).status).toBe(400);
    expect((await post({ tool: 'Bash', input: {}, task_id: 'tsk_nope' })).status).toBe(400);
    expect((await post({ tool: 'Bash', input: { blob: 'x'.repeat(2_000_000) } })).status).toBe(413);
    expect((await post({ tool: 'Bash', input: {} }, 'approver')).status).toBe(403);
    expect((await post({ tool: 'Bash', input: {} }, { authorization: 'Bearer nope' })).status).toBe(401);
    const res = await h.t.app.request('/v1/gate/evaluate', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: 'Bearer agent-key-0123456789abcdef' },
      body: '{}',
    });
    expect(res.status).toBe(415);
  });

  it('fails closed for high risk and open (tagged) for read-only when a rule errors', async () => {
    await start([{ id: 'broken', when: 'input.missing == "x"', decision: 'deny', reason_code: 'NEVER' }]);
    expect(await decide({ tool: 'Bash', input: {} })).toMatchObject({
      decision: 'deny',
      reason_code: 'POLICY_ERROR',
    });
    const d = await decide({ tool: 'Read', input: {} });
    expect(d).toMatchObject({ decision: 'allow', tags: ['policy_unavailable'] });
    expect(d.capability).toBeUndefined();
  });
});
