import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { auth } from '../server/testing.js';
import { type GateDecision, type GateService, planRecheckOf } from '../gate/port.js';
import { DEFAULT_APPROVAL_TTL_SECONDS } from './config.js';
import { type ApprovalsHarness, approvalsHarness } from './testing.js';

type Body = Record<string, unknown> & { id: string; status: string };

describe.each(await dialects())('approvals on %s', (dialect) => {
  let h: ApprovalsHarness;
  beforeEach(async () => {
    h = await approvalsHarness(dialect);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const asked = async (body?: Record<string, unknown>): Promise<Body> => {
    const res = await h.ask(body);
    expect(res.status).toBe(201);
    return (await res.json()) as Body;
  };
  const status = async (id: string, role: 'agent' | 'approver' | 'admin' = 'approver'): Promise<Body> => {
    const res = await h.app.request(`/v1/approvals/${id}`, { headers: auth(role) });
    expect(res.status).toBe(200);
    return (await res.json()) as Body;
  };

  it('creates a pending approval with a frozen plan digest and a fifteen-minute expiry', async () => {
    const a = await asked({
      action: 'deploy prod',
      reason: 'release 1.2',
      payload_json: '{"ref":"v1.2"}',
      tool: 'Bash',
    });
    expect(a.id).toMatch(/^apr_[0-9A-Z]{26}$/);
    expect(a.status).toBe('pending');
    expect(a.plan_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a.plan).toEqual({ tool: 'Bash', input: { ref: 'v1.2' }, action: 'deploy prod' });
    expect(Date.parse(a.expires_at as string) - Date.parse(a.created_at as string)).toBe(
      DEFAULT_APPROVAL_TTL_SECONDS * 1000,
    );
    expect(await h.eventTypes()).toEqual(['agent.approval.requested']);
  });

  it('walks pending to approved, with the decision and comment visible to the asking agent', async () => {
    const a = await asked();
    const res = await h.decide(a.id, 'approve', 'approver', 'looks fine');
    expect(res.status).toBe(200);
    const seen = await status(a.id, 'agent');
    expect(seen).toMatchObject({ status: 'approved', decided_by: 'me', comment: 'looks fine' });
    expect(seen.recheck).toEqual({ outcome: 'skipped', reason_code: 'GATE_NOT_RUNNING' });
    expect(await h.eventTypes()).toEqual(['agent.approval.requested', 'agent.approval.approved']);
    const rows = await h.services.db.query<{ correlation_id: string; causation_id: string | null }>({
      text: 'SELECT correlation_id, causation_id FROM events ORDER BY seq',
    });
    expect(rows[1]!.correlation_id).toBe(rows[0]!.correlation_id);
  });

  it('walks pending to rejected on an admin key', async () => {
    const a = await asked();
    expect((await h.decide(a.id, 'reject', 'admin')).status).toBe(200);
    expect((await status(a.id)).status).toBe('rejected');
    expect(await h.eventTypes()).toContain('agent.approval.rejected');
  });

  it('refuses a decision from an agent key with 403 self_approval and leaves it pending', async () => {
    const a = await asked();
    const res = await h.decide(a.id, 'approve', 'agent');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('self_approval');
    expect((await status(a.id)).status).toBe('pending');
  });

  it('lets exactly one of two concurrent decisions win; the other gets 409 already_decided', async () => {
    const a = await asked();
    const results = await Promise.all([h.decide(a.id, 'approve'), h.decide(a.id, 'reject', 'admin')]);
    const codes = results.map((r) => r.status).sort();
    expect(codes).toEqual([200, 409]);
    const loser = results.find((r) => r.status === 409)!;
    expect(((await loser.json()) as { error: { code: string } }).error.code).toBe('already_decided');
    const decided = (await h.eventTypes()).filter((t) => t !== 'agent.approval.requested');
    expect(decided).toHaveLength(1);
  });

  it('answers a second decision after the first with 409 and changes nothing', async () => {
    const a = await asked();
    await h.decide(a.id, 'approve');
    const again = await h.decide(a.id, 'reject');
    expect(again.status).toBe(409);
    expect((await status(a.id)).status).toBe('approved');
  });

  it('answers a decision on an expired approval with 410 expired', async () => {
    const a = await asked();
    h.clock.now += DEFAULT_APPROVAL_TTL_SECONDS * 1000 + 1;
    const res = await h.decide(a.id, 'approve');
    expect(res.status).toBe(410);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('expired');
    expect((await status(a.id)).status).toBe('expired');
  });

  it('records expiry once through the worker sweep, with one expired event', async () => {
    const a = await asked();
    const b = await asked();
    h.clock.now += DEFAULT_APPROVAL_TTL_SECONDS * 1000 + 1;
    await h.decide(b.id, 'approve'); // too late: 410, nothing written
    expect(await h.approvals.expireDue()).toBe(2);
    expect(await h.approvals.expireDue()).toBe(0);
    const rows = await h.services.db.query<{ state: string }>({
      text: 'SELECT state FROM approvals ORDER BY id',
    });
    expect(rows.map((r) => r.state)).toEqual(['expired', 'expired']);
    expect((await h.eventTypes()).filter((t) => t === 'agent.approval.expired')).toHaveLength(2);
    expect((await status(a.id)).status).toBe('expired');
  });

  it('holds POST ?wait= until another request decides, then answers the decision', async () => {
    const started = performance.now();
    const waiting = h.ask({ action: 'rm -rf build', reason: 'clean' }, 'agent', '?wait=10');
    let id: string | undefined;
    for (let i = 0; i < 100 && !id; i++) {
      await new Promise((r) => setTimeout(r, 10));
      const list = (await (
        await h.app.request('/v1/approvals?state=pending', { headers: auth('approver') })
      ).json()) as {
        approvals: Body[];
      };
      id = list.approvals[0]?.id;
    }
    expect(id).toBeDefined();
    expect((await h.decide(id!, 'approve')).status).toBe(200);
    const res = await waiting;
    expect(res.status).toBe(201);
    expect(((await res.json()) as Body).status).toBe('approved');
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('sees a decision another replica wrote to the store (no in-process wake) within a poll', async () => {
    const a = await asked();
    const waiting = h.approvals.wait(a.id, 5000);
    await new Promise((r) => setTimeout(r, 60));
    await h.services.db.query({
      text: `UPDATE approvals SET state = 'rejected', decided_by = 'elsewhere' WHERE id = $1`,
      values: [a.id],
    });
    const seen = await waiting;
    expect(seen?.state).toBe('rejected');
  });

  it('holds GET ?wait= on a pending approval until it is decided', async () => {
    const a = await asked();
    const waiting = h.app.request(`/v1/approvals/${a.id}?wait=10`, { headers: auth('agent') });
    await new Promise((r) => setTimeout(r, 50));
    await h.decide(a.id, 'reject');
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(((await res.json()) as Body).status).toBe('rejected');
  });

  it('answers the current pending state when ?wait= runs out', async () => {
    const res = await h.ask(undefined, 'agent', '?wait=1');
    expect(res.status).toBe(201);
    expect(((await res.json()) as Body).status).toBe('pending');
  });

  it('shows an agent only the approvals it asked for', async () => {
    const a = await asked();
    h.services.keys.add('other-agent-key-0123456789', { name: 'other', role: 'agent' });
    const res = await h.app.request(`/v1/approvals/${a.id}`, {
      headers: { authorization: 'Bearer other-agent-key-0123456789' },
    });
    expect(res.status).toBe(404);
  });

  it('takes the task from a task-bound key and refuses a different task in the body', async () => {
    h.services.keys.add('task-agent-key-0123456789', {
      name: 'launched',
      role: 'agent',
      task_id: 'tsk_01JAAAAAAAAAAAAAAAAAAAAAAA',
    });
    const headers = { authorization: 'Bearer task-agent-key-0123456789', 'content-type': 'application/json' };
    const ok = await h.app.request('/v1/approvals', {
      method: 'POST',
      headers,
      body: JSON.stringify({ action: 'a', reason: 'r' }),
    });
    expect(((await ok.json()) as Body).task_id).toBe('tsk_01JAAAAAAAAAAAAAAAAAAAAAAA');
    const bad = await h.app.request('/v1/approvals', {
      method: 'POST',
      headers,
      body: JSON.stringify({ action: 'a', reason: 'r', task_id: 'tsk_01JBBBBBBBBBBBBBBBBBBBBBBB' }),
    });
    expect(bad.status).toBe(403);
  });

  it('lets only the named approvers (or an admin) decide when the request names them', async () => {
    const a = await h.approvals.request({
      action: 'pay',
      reason: 'invoice',
      plan: { tool: 'pay', input: { amount: 5 } },
      requested_by: { name: 'bot', role: 'agent' },
      approvers: ['finance'],
    });
    expect((await h.decide(a.id, 'approve', 'approver')).status).toBe(403);
    expect((await h.decide(a.id, 'approve', 'admin')).status).toBe(200);
  });

  it('joins the correlation and task of the event that caused the request (the gate path)', async () => {
    const cause = await h.services.emit({
      type: 'agent.tool.requested',
      execution: { task_id: 'tsk_01JAAAAAAAAAAAAAAAAAAAAAAA', session_id: 'ses-1' },
    });
    const a = await h.approvals.request({
      action: 'push',
      reason: 'policy asks',
      plan: { tool: 'Bash', input: { command: 'git push' } },
      requested_by: { name: 'bot', role: 'agent' },
      cause,
    });
    expect(a).toMatchObject({ task_id: 'tsk_01JAAAAAAAAAAAAAAAAAAAAAAA', session_id: 'ses-1' });
    const rows = await h.services.db.query<{ correlation_id: string; causation_id: string }>({
      text: "SELECT correlation_id, causation_id FROM events WHERE type = 'agent.approval.requested'",
    });
    expect(rows[0]).toEqual({ correlation_id: cause.correlation_id, causation_id: cause.event_id });
  });

  it('lists approvals by state for an approver', async () => {
    const a = await asked();
    const b = await asked();
    await h.decide(b.id, 'reject');
    const pending = (await (
      await h.app.request('/v1/approvals?state=pending', { headers: auth('approver') })
    ).json()) as {
      approvals: Body[];
    };
    expect(pending.approvals.map((x) => x.id)).toEqual([a.id]);
    const all = (await (await h.app.request('/v1/approvals', { headers: auth('admin') })).json()) as {
      approvals: Body[];
    };
    expect(all.approvals.map((x) => x.id)).toEqual([b.id, a.id]);
  });

  describe('the gate re-check on approval', () => {
    const fakeGate = (d: Partial<GateDecision> | Error): GateService => ({
      async evaluate(intent) {
        if (d instanceof Error) throw d;
        const { planDigest } = await import('../envelope/plan.js');
        return {
          decision: 'allow',
          reason_code: 'OK',
          policy_revision: 'rev1',
          plan_digest: planDigest(intent),
          constraints: {},
          matched_rules: [],
          ...d,
        };
      },
    });

    it('stores the capability the gate issues when the current policy allows the frozen plan', async () => {
      h.approvals.useRecheck(
        planRecheckOf(
          fakeGate({
            capability: { id: 'cap_X', expires_at: '2030-01-01T00:00:00Z', token: 'tok' },
          }),
        ),
      );
      const a = await asked();
      await h.decide(a.id, 'approve');
      const seen = await status(a.id, 'agent');
      expect(seen.capability).toEqual({ id: 'cap_X', expires_at: '2030-01-01T00:00:00Z', token: 'tok' });
      const body = await h.services.db.query<{ body: string }>({
        text: "SELECT body FROM events WHERE type = 'agent.approval.approved'",
      });
      expect(body[0]!.body).toContain('cap_X');
      expect(body[0]!.body).not.toContain('"tok"');
    });

    it('approves without a capability, and says why, when the current policy now denies', async () => {
      h.approvals.useRecheck(planRecheckOf(fakeGate({ decision: 'deny', reason_code: 'FORCE_PUSH' })));
      const a = await asked();
      expect((await h.decide(a.id, 'approve')).status).toBe(200);
      const seen = await status(a.id);
      expect(seen.status).toBe('approved');
      expect(seen.capability).toBeUndefined();
      expect(seen.recheck).toMatchObject({
        outcome: 'no_capability',
        decision: 'deny',
        reason_code: 'FORCE_PUSH',
      });
    });

    it('grants no capability when the gate answers for a different plan digest', async () => {
      h.approvals.useRecheck(
        planRecheckOf(
          fakeGate({
            plan_digest: 'sha256:other',
            capability: { id: 'cap_Y', expires_at: 'x', token: 't' },
          }),
        ),
      );
      const a = await asked();
      await h.decide(a.id, 'approve');
      expect((await status(a.id)).recheck).toMatchObject({ reason_code: 'PLAN_CHANGED' });
    });

    it('fails closed (no capability, RECHECK_FAILED) when the gate throws', async () => {
      h.approvals.useRecheck(planRecheckOf(fakeGate(new Error('boom'))));
      const a = await asked();
      expect((await h.decide(a.id, 'approve')).status).toBe(200);
      expect((await status(a.id)).recheck).toMatchObject({
        outcome: 'no_capability',
        reason_code: 'RECHECK_FAILED',
      });
    });

    it('prefers the gate evaluateApproved re-check when the gate offers one', async () => {
      const gate = Object.assign(fakeGate({ decision: 'require_approval' }), {
        async evaluateApproved(_intent: unknown, _ctx: unknown, frozen: string): Promise<GateDecision> {
          return {
            decision: 'allow',
            reason_code: 'APPROVED',
            policy_revision: 'r',
            plan_digest: frozen,
            constraints: {},
            matched_rules: [],
            capability: { id: 'cap_Z', expires_at: 'e', token: 't' },
          };
        },
      });
      h.approvals.useRecheck(planRecheckOf(gate));
      const a = await asked();
      await h.decide(a.id, 'approve');
      expect(((await status(a.id)).capability as { id: string }).id).toBe('cap_Z');
    });

    it('does not consult the gate on a rejection', async () => {
      h.approvals.useRecheck(planRecheckOf(fakeGate(new Error('must not be called'))));
      const a = await asked();
      await h.decide(a.id, 'reject');
      expect((await status(a.id)).recheck).toBeNull();
    });
  });
});

describe.each(await dialects())('the expiry worker on %s', (dialect) => {
  it('marks a past-due approval expired on its own and wakes a waiter', async () => {
    const h = await approvalsHarness(dialect, {
      expiryWorker: true,
      realClock: true,
      config: { ttl_seconds: 10, expiry_sweep_ms: 20 },
    });
    try {
      const a = await h.approvals.request({
        action: 'x',
        reason: 'y',
        plan: { tool: 't', input: {} },
        requested_by: { name: 'bot', role: 'agent' },
        ttl_ms: 100,
      });
      const seen = await h.approvals.wait(a.id, 3000);
      expect(seen?.state).toBe('expired');
      for (let i = 0; i < 100; i++) {
        if ((await h.eventTypes()).includes('agent.approval.expired')) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const rows = await h.services.db.query<{ state: string }>({ text: 'SELECT state FROM approvals' });
      expect(rows[0]!.state).toBe('expired');
      expect((await h.eventTypes()).filter((t) => t === 'agent.approval.expired')).toHaveLength(1);
    } finally {
      await h.cleanup();
    }
  });
});

describe('secrets in what an agent asks', () => {
  it('keeps them out of the log', async () => {
    const { testApp, auth } = await import('../server/testing.js');
    const t = await testApp();
    try {
      const res = await t.app.request('/v1/approvals', {
        method: 'POST',
        headers: { ...auth('agent'), 'content-type': 'application/json' },
        body: JSON.stringify({
          action: 'push with ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
          reason: 'AKIAIOSFODNN7EXAMPLE',
        }),
      });
      expect(res.status).toBe(201);
      const logged = JSON.stringify(
        (await t.services.log.list({ type: 'agent.approval.requested' })).map((e) => e.envelope),
      );
      expect(logged).not.toContain('ghp_0123456789abcdefghijklmnopqrstuvwxyzAB');
      expect(logged).not.toContain('AKIAIOSFODNN7EXAMPLE');
    } finally {
      await t.cleanup();
    }
  });
});
