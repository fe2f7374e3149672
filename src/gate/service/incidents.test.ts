import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../../store/testing.js';
import type { GateDecision } from '../../gate/port.js';
import { type GateHarness, gateHarness } from './testing.js';

type Verify = { valid: boolean; reason?: string; claims?: Record<string, unknown> };

describe.each(await dialects())('capabilities and incidents on %s', (dialect) => {
  let h: GateHarness;
  beforeEach(async () => {
    h = await gateHarness(dialect, { config: { rules: [], gate: { capability_ttl_seconds: 60 } } });
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const plan = { tool: 'Bash', input: { command: 'make' } };
  const allow = async (headers: Parameters<GateHarness['post']>[2] = 'agent') => {
    const res = await h.post('/v1/gate/evaluate', plan, headers);
    return (await res.json()) as GateDecision;
  };
  const verify = async (body: Record<string, unknown>, role: 'admin' | 'agent' | 'approver' = 'agent') => {
    const res = await h.post('/v1/capabilities/verify', body, role);
    expect(res.status).toBe(200);
    return (await res.json()) as Verify;
  };

  it('verifies a fresh capability for its exact plan with any role', async () => {
    const d = await allow();
    for (const role of ['agent', 'approver', 'admin'] as const) {
      const v = await verify({ token: d.capability!.token, plan }, role);
      expect(v).toMatchObject({
        valid: true,
        claims: { tool: 'Bash', plan_digest: d.plan_digest, agent: 'bot' },
      });
    }
  });

  it('fails a tampered token, another plan, an expired token and a wrong expected tenant or task', async () => {
    const { token } = (await allow()).capability!;
    const [head, body, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, tool: 'Write' })).toString('base64url');
    expect(await verify({ token: `${head}.${forged}.${sig}`, plan })).toEqual({
      valid: false,
      reason: 'BAD_SIGNATURE',
    });
    expect(await verify({ token: `${head}.${body}`, plan })).toEqual({ valid: false, reason: 'MALFORMED' });
    expect(await verify({ token, plan: { tool: 'Bash', input: { command: 'make install' } } })).toEqual({
      valid: false,
      reason: 'PLAN_MISMATCH',
    });
    expect(await verify({ token, plan: { ...plan, tool: 'Write' } })).toEqual({
      valid: false,
      reason: 'TOOL_MISMATCH',
    });
    expect(await verify({ token, plan, expect: { tenant: 'other' } })).toEqual({
      valid: false,
      reason: 'TENANT_MISMATCH',
    });
    expect(await verify({ token, plan, expect: { task: 'tsk_01JB0000000000000000000000' } })).toEqual({
      valid: false,
      reason: 'TASK_MISMATCH',
    });
    h.clock.now += 60_000 + 10_000; // the lifetime plus the allowed skew: still valid at the edge
    expect((await verify({ token, plan })).valid).toBe(true);
    h.clock.now += 1_000;
    expect(await verify({ token, plan })).toEqual({ valid: false, reason: 'EXPIRED' });
  });

  it('revokes by task, agent, tenant and capability id, and a later capability is not revoked', async () => {
    const { task_id, headers } = h.taskKey();
    const byTask = (await allow(headers)).capability!;
    const byAgent = (await allow()).capability!;
    const byId = (await allow()).capability!;
    const post = (body: unknown) => h.post('/v1/incidents/revoke', body, 'admin');
    expect((await post({ task_id })).status).toBe(201);
    expect(await verify({ token: byTask.token, plan })).toEqual({ valid: false, reason: 'REVOKED' });
    expect((await verify({ token: byAgent.token, plan })).valid).toBe(true);
    expect((await post({ capability_id: byId.id, reason: 'leaked in a log' })).status).toBe(201);
    expect(await verify({ token: byId.token, plan })).toEqual({ valid: false, reason: 'REVOKED' });
    expect((await post({ agent: 'bot' })).status).toBe(201);
    expect(await verify({ token: byAgent.token, plan })).toEqual({ valid: false, reason: 'REVOKED' });
    h.clock.now += 2_000;
    const later = (await allow()).capability!;
    expect((await verify({ token: later.token, plan })).valid).toBe(true);
    expect((await post({ tenant: 'default' })).status).toBe(201);
    expect(await verify({ token: later.token, plan })).toEqual({ valid: false, reason: 'REVOKED' });
    const list = (await (await h.get('/v1/incidents')).json()) as { revocations: { scope: string }[] };
    expect(list.revocations.map((r) => r.scope).sort()).toEqual(['agent', 'capability', 'task', 'tenant']);
  });

  it('freezes an agent to read-only until unfrozen, and a tenant freeze covers every agent', async () => {
    const freeze = (body: unknown, path = 'freeze') => h.post(`/v1/incidents/${path}`, body, 'admin');
    expect(await (await freeze({ agent: 'bot', reason: 'incident 42' })).json()).toMatchObject({
      changed: true,
    });
    expect(await (await freeze({ agent: 'bot' })).json()).toMatchObject({ changed: false });
    expect(await allow()).toMatchObject({ decision: 'deny', reason_code: 'FROZEN_READ_ONLY' });
    const read = await h.post('/v1/gate/evaluate', { tool: 'Read', input: { file_path: '/etc/hosts' } });
    expect(((await read.json()) as GateDecision).decision).toBe('allow');
    expect((await allow('admin')).decision).toBe('allow');
    const list = (await (await h.get('/v1/incidents')).json()) as {
      freezes: { scope: string; value: string }[];
    };
    expect(list.freezes).toMatchObject([{ scope: 'agent', value: 'bot', reason: 'incident 42' }]);
    expect(await (await freeze({ agent: 'bot' }, 'unfreeze')).json()).toMatchObject({ changed: true });
    expect((await allow()).decision).toBe('allow');
    await freeze({ tenant: 'default' });
    expect((await allow('admin')).reason_code).toBe('FROZEN_READ_ONLY');
    const types = await h.t.services.db.query<{ type: string }>({
      text: "SELECT type FROM events WHERE type LIKE 'agent.agent.%' ORDER BY seq",
    });
    expect(types.map((r) => r.type)).toEqual([
      'agent.agent.frozen',
      'agent.agent.unfrozen',
      'agent.agent.frozen',
    ]);
  });

  it('answers 400, 413, 403 and 401 for bad bodies and wrong keys on the incident and verify routes', async () => {
    for (const path of ['/v1/incidents/revoke', '/v1/incidents/freeze', '/v1/incidents/unfreeze']) {
      expect((await h.post(path, '{', 'admin')).status).toBe(400);
      expect((await h.post(path, {}, 'admin')).status).toBe(400);
      expect((await h.post(path, { agent: 'a', tenant: 'b' }, 'admin')).status).toBe(400);
      expect((await h.post(path, { agent: 5 }, 'admin')).status).toBe(400);
      expect((await h.post(path, { agent: 'a', extra: true }, 'admin')).status).toBe(400);
      expect((await h.post(path, { agent: 'a'.repeat(2_000_000) }, 'admin')).status).toBe(413);
      expect((await h.post(path, { agent: 'a' }, 'agent')).status).toBe(403);
      expect((await h.post(path, { agent: 'a' }, 'approver')).status).toBe(403);
      expect((await h.post(path, { agent: 'a' }, { authorization: 'Bearer x' })).status).toBe(401);
    }
    expect((await h.post('/v1/incidents/revoke', { task_id: 'tsk_bad' }, 'admin')).status).toBe(400);
    expect(
      (await h.post('/v1/incidents/revoke', { capability_id: 'apr_01JB0000000000000000000000' }, 'admin'))
        .status,
    ).toBe(400);
    expect((await h.get('/v1/incidents', 'agent')).status).toBe(403);
    const v = '/v1/capabilities/verify';
    expect((await h.post(v, '{')).status).toBe(400);
    expect((await h.post(v, { token: 'x' })).status).toBe(400);
    expect((await h.post(v, { token: 'x', plan: { tool: 'Bash' } })).status).toBe(400);
    expect((await h.post(v, { token: 'x', plan, more: 1 })).status).toBe(400);
    expect((await h.post(v, { token: 'x', plan, expect: { task: 'nope' } })).status).toBe(400);
    expect((await h.post(v, { token: 'x'.repeat(2_000_000), plan })).status).toBe(413);
    expect((await h.post(v, { token: 'x', plan }, { authorization: 'Bearer x' })).status).toBe(401);
    expect(await verify({ token: 'x', plan })).toEqual({ valid: false, reason: 'MALFORMED' });
  });
});
