import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { approvalsPort } from './port.js';
import { type ApprovalsHarness, approvalsHarness } from './testing.js';

/** What the console reads and does through the approvals port: the list, and a decision marked `console`. */
describe.each(await dialects())('approvals for the console on %s', (dialect) => {
  let h: ApprovalsHarness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it('lists approvals newest first with their plan, and the pending ones alone', async () => {
    h = await approvalsHarness(dialect);
    const port = h.port(approvalsPort);
    const a = (await (await h.ask({ action: 'one', reason: 'r', payload_json: '{"n":1}' })).json()) as {
      id: string;
    };
    h.clock.now += 1;
    const b = (await (await h.ask({ action: 'two', reason: 'r' })).json()) as { id: string };
    await h.decide(a.id, 'reject');
    const all = await port.list!({ limit: 10 });
    expect(all.map((x) => x.id)).toEqual([b.id, a.id]);
    expect(all[1]!.plan.input).toEqual({ n: 1 });
    expect((await port.list!({ state: 'pending', limit: 10 })).map((x) => x.id)).toEqual([b.id]);
  });

  it('records a console decision as `via: console` and still checks who may decide', async () => {
    h = await approvalsHarness(dialect);
    const port = h.port(approvalsPort);
    const { id } = (await (await h.ask()).json()) as { id: string };
    await port.decide(id, 'approve', { name: 'me', role: 'approver' }, 'fine', 'console');
    const [event] = await h.services.log.list({ type: 'agent.approval.approved', limit: 1 });
    expect(event!.envelope.redacted_summary).toMatchObject({
      via: 'console',
      decided_by: 'me',
      comment: 'fine',
    });
    const limited = await h.approvals.request({
      action: 'x',
      reason: 'y',
      plan: { tool: 't', input: {} },
      requested_by: { name: 'bot', role: 'agent' },
      approvers: ['alice'],
    });
    await expect(
      port.decide(limited.id, 'approve', { name: 'me', role: 'approver' }, undefined, 'console'),
    ).rejects.toMatchObject({
      code: 'forbidden',
    });
  });
});
