import { TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalsModule } from '../approvals/module.js';
import { deliveryModule } from '../delivery/module.js';
import { coreModule } from '../server/core-routes.js';
import { KEYS } from '../server/testing.js';
import { dialects } from '../store/testing.js';
import { tasksModule } from '../tasks/module.js';
import { a2aModule } from './module.js';
import { type A2AGateway, a2aGateway, sdkClient, waitFor, sendText } from './testing.js';

/**
 * A skill whose agent asks for approval with its task-scoped key and waits for the decision (as the
 * MCP tool `ask_approval` does), then exits 0 when approved.
 */
const asking = `(async () => { const res = await fetch(new URL('/v1/approvals?wait=30', process.env.SWITCHBOARD_URL), { method: 'POST', headers: { authorization: 'Bearer ' + process.env.SWITCHBOARD_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'deploy.prod', reason: 'ship the reviewed change' }) }); const a = await res.json(); process.exit(a.status === 'approved' ? 0 : 6); })().catch((e) => { process.stderr.write(String(e)); process.exit(5); })`;

async function rpc(url: string, method: string, params: unknown) {
  const res = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEYS.agent}`,
      'content-type': 'application/json',
      'a2a-version': '1.0',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as {
    result?: { task?: { id: string } };
    error?: { code: number; message: string };
  };
}

describe.each(await dialects())('an input-required A2A task on %s', (dialect) => {
  let g: A2AGateway | undefined;
  afterEach(async () => {
    await g?.stop();
    g = undefined;
  });

  it("is INPUT_REQUIRED while its agent's approval is pending; two follow-ups at once: one continues it, and the task goes on when approved", async () => {
    g = await a2aGateway(dialect, {
      modules: [
        coreModule(),
        approvalsModule(),
        deliveryModule(),
        tasksModule({ runSupervisor: false }),
        a2aModule(),
      ],
      config: {
        auth: {
          keys: [
            { name: 'bot', role: 'agent', key: KEYS.agent },
            { name: 'me', role: 'approver', key: KEYS.approver },
          ],
        },
      },
      a2a: {
        skills: [
          {
            id: 'deploy',
            name: 'Deploy',
            description: 'Deploys after approval',
            action: { type: 'command', command: [process.execPath, '-e', asking] },
          },
        ],
      },
    });
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'deploy it');
    const get = () => client.getTask({ tenant: '', id: sent.id, historyLength: 0 });
    await waitFor(async () =>
      (await get()).status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? true : undefined,
    );
    // Two follow-ups at once, raw so neither client retries: the store's claim admits one of them.
    const follow = (text: string) =>
      rpc(g!.url, 'SendMessage', {
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId: sent.id, parts: [{ text }] },
        configuration: { returnImmediately: true },
      });
    const answers = await Promise.all([follow('go ahead'), follow('also this')]);
    const refused = answers.filter((a) => a.error);
    expect(refused.map((a) => a.error!.code)).toEqual([-32004]);
    expect(refused[0]!.error!.message).toContain('already being continued by another message');
    // The admitted one cannot reach an agent that is still waiting on its approval: the task stays
    // INPUT_REQUIRED (not FAILED), with the reason as its status message, and its claim is given back.
    const kept = await waitFor(async () => {
      const t = await get();
      const text = t.status?.message?.parts[0]?.content;
      return text?.$case === 'text' && text.value.includes('could not be resumed') ? t : undefined;
    });
    expect(kept.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // So a later follow-up is admitted again (its resume refused the same way).
    const later = await follow('one more');
    expect(later.error).toBeUndefined();
    // The approver decides; the agent's wait returns, it exits 0, and the task completes.
    const pending = await waitFor(async () => {
      const res = await fetch(`${g!.url}/v1/approvals?state=pending`, {
        headers: { authorization: `Bearer ${KEYS.approver}` },
      });
      return ((await res.json()) as { approvals: { id: string }[] }).approvals[0];
    });
    const decided = await fetch(`${g.url}/v1/approvals/${pending.id}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.approver}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBeLessThan(300);
    const done = await waitFor(async () => {
      const t = await get();
      return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
    });
    expect(done.id).toBe(sent.id);
    const types = (await g.gateway.services.log.list({})).map((e) => e.envelope.type);
    expect(types).toContain('agent.task.input_required');
    // (`agent.task.resumed` via the approval may come before the exit or lose to it: the tasks module's race.)
  });
});
