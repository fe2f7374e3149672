import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectsModule } from './module.js';
import { effectKey, type EffectsPort, type Trace } from './port.js';
import type { Module } from '../kernel/module.js';
import { type ReachApp, reachApp } from '../reach/testing.js';
import { auth } from '../server/testing.js';
import { dialects } from '../store/testing.js';

/**
 * Issue 20 point 1: a reach write tool, held for a person and approved, is an effect whose receipt is
 * linked to the policy revision, the capability and the approval; one trace shows the whole chain.
 */

let writes = 0;

describe.each(await dialects())('effects with receipts on %s', (dialect) => {
  let r: ReachApp;
  let effects: EffectsPort;
  beforeAll(async () => {
    const mod = effectsModule();
    r = await reachApp({
      dialect,
      modules: [mod as Module],
      tools: [
        {
          name: 'door.open',
          schema: { type: 'object', properties: { door: { type: 'string' } } },
          permission: 'write',
          run: (p) => {
            writes++;
            return { opened: p.door };
          },
        },
        { name: 'door.look', schema: { type: 'object' }, run: () => ({ open: false }) },
      ],
      config: {
        rules: [
          {
            id: 'doors-need-a-person',
            when: 'tool == "door.open"',
            decision: 'require_approval',
            reason_code: 'DOOR',
          },
        ],
      },
    });
    effects = mod.service()!;
  });
  afterAll(async () => {
    await r.cleanup();
  });

  it('records an approved write as an effect with its receipt, linked to revision, capability and approval', async () => {
    const request_id = `door-${randomBytes(4).toString('hex')}`;
    const first = await r.touch({ request_id, tool_name: 'door.open', params: { door: 'front' } });
    const approvalId = (first.body.error as { details: { approval_id: string } }).details.approval_id;
    // Nothing ran yet, so there is no effect: the effect is what happens, not what is asked.
    expect(await effects.list({})).toEqual([]);
    const decided = await r.t.app.request(`/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('approver') },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    const before = writes;
    const done = await r.touch({ request_id, tool_name: 'door.open', params: { door: 'front' } });
    expect(done.body).toMatchObject({ ok: true, data: { opened: 'front' } });
    expect(writes).toBe(before + 1);

    const [effect] = await effects.list({});
    expect(effect).toMatchObject({
      kind: 'reach',
      ref: request_id,
      target: 'door.open',
      status: 'done',
      approval_id: approvalId,
    });
    expect(effect!.plan_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(effect!.capability_id).toMatch(/^cap_/);
    const policy = await r.t.app.request('/v1/policy', { headers: auth('admin') });
    expect(effect!.policy_revision).toBe(((await policy.json()) as { revision: string }).revision);
    expect(effect!.idempotency_key).toBe(effectKey(effect!.plan_digest, effect!.capability_id));
    expect(effect!.answer_digest).toMatch(/^sha256:/);

    const res = await r.t.app.request(`/v1/effects/trace/${request_id}`, { headers: auth('admin') });
    expect(res.status).toBe(200);
    const trace = (await res.json()) as Trace;
    const stages = trace.steps.map((s) => s.stage);
    for (const stage of ['intent', 'approval', 'effect', 'receipt'] as const)
      expect(stages, `a ${stage} step`).toContain(stage);
    // In that order: the intent before the approval, the approval before the effect, then the receipt.
    const at = (stage: (typeof stages)[number]) => stages.indexOf(stage);
    expect(at('intent')).toBeLessThan(at('approval'));
    expect(at('approval')).toBeLessThan(at('effect'));
    expect(at('effect')).toBeLessThan(stages.lastIndexOf('receipt'));
    const receipt = trace.steps.find((s) => s.type === 'agent.effect.receipted')!;
    expect(receipt.facts).toMatchObject({
      effect_id: effect!.id,
      status: 'done',
      capability_id: effect!.capability_id,
      approval_id: approvalId,
    });
    expect(trace.effects.map((e) => e.id)).toEqual([effect!.id]);
    // The trace by the effect's own id, by its prepared event and by the approval's evidence is the same chain.
    const byEvent = await effects.trace(effect!.prepared_event_id);
    expect(byEvent?.effects.map((e) => e.id)).toContain(effect!.id);
  });

  it('records no effect for a read tool', async () => {
    const n = (await effects.list({})).length;
    const look = await r.touch({ tool_name: 'door.look', params: {} });
    expect(look.body.ok).toBe(true);
    expect(await effects.list({})).toHaveLength(n);
  });

  it('prepares an effect once per key: the same plan and capability is the same effect', async () => {
    const e = {
      kind: 'http' as const,
      ref: 'tsk_x',
      target: 't',
      plan_digest: 'sha256:00',
      capability_id: 'cap_1',
    };
    const a = await effects.prepared(e);
    const b = await effects.prepared(e);
    expect(a.created).toBe(true);
    expect(b).toEqual({ ...a, created: false });
    const c = await effects.prepared({ ...e, capability_id: 'cap_2' });
    expect(c.idempotency_key).not.toBe(a.idempotency_key);
    expect(await effects.receipted('idk_nothing', { status: 'done' })).toBeUndefined();
    const settled = await effects.receipted(a.idempotency_key, { status: 'unsettled', detail: 'timeout' });
    expect(settled?.status).toBe('unsettled');
    expect((await effects.unsettled()).map((x) => x.id)).toContain(a.id);
  });

  it('answers the admin routes with clear errors', async () => {
    const list = await r.t.app.request('/v1/effects?status=unsettled', { headers: auth('admin') });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { effects: unknown[] }).effects.length).toBeGreaterThan(0);
    const bad = await r.t.app.request('/v1/effects?status=nope', { headers: auth('admin') });
    expect(bad.status).toBe(400);
    const unknown = await r.t.app.request('/v1/effects?colour=red', { headers: auth('admin') });
    expect(unknown.status).toBe(400);
    const agent = await r.t.app.request('/v1/effects', { headers: auth('agent') });
    expect(agent.status).toBe(403);
    const missing = await r.t.app.request('/v1/effects/trace/evt_01JAAAAAAAAAAAAAAAAAAAAAAA', {
      headers: auth('admin'),
    });
    expect(missing.status).toBe(404);
    const odd = await r.t.app.request(`/v1/effects/trace/${encodeURIComponent('a b')}`, {
      headers: auth('admin'),
    });
    expect(odd.status).toBe(400);
  });
});
