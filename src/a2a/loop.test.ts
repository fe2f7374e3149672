import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Task, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { type TaskService, tasksPort } from '../tasks/port.js';
import {
  type A2AGateway,
  a2aGateway,
  nodeSkill,
  sdkClient,
  userMessage,
  waitFor,
  sendText,
} from './testing.js';

/**
 * A skill whose agent calls the same skill again over A2A with its task-scoped key (a chain of agents
 * delegating to each other), answers its input, and exits 0.
 */
const delegating = `(async () => { const res = await fetch(new URL('/a2a', process.env.SWITCHBOARD_URL), { method: 'POST', headers: { authorization: 'Bearer ' + process.env.SWITCHBOARD_KEY, 'content-type': 'application/json', 'a2a-version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm-' + process.env.SWITCHBOARD_TASK_ID, role: 'ROLE_USER', parts: [{ text: 'go one deeper' }] }, configuration: { returnImmediately: true } } }) }); if (!res.ok) process.exit(4); process.exit(0); })().catch((e) => { process.stderr.write(String(e)); process.exit(5); })`;

describe.each(await dialects())('the loop guard for A2A skills on %s', (dialect) => {
  let g: A2AGateway | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await g?.stop();
    g = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const states = async () =>
    (
      await g!.gateway.services.db.query<{ state: string }>({
        text: 'SELECT state FROM a2a_tasks ORDER BY created_at, id',
      })
    ).map((r) => r.state);

  it('refuses a skill call from an agent already loop.max_depth deep: REJECTED, nothing launched', async () => {
    const work = mkdtempSync(join(tmpdir(), 'sb-a2a-loop-'));
    dirs.push(work);
    g = await a2aGateway(dialect, {
      config: { loop: { max_depth: 2 } },
      a2a: {
        skills: [
          {
            id: 'chain',
            name: 'Chain',
            description: 'Delegates to itself',
            action: { type: 'command', command: [process.execPath, '-e', delegating] },
          },
        ],
      },
    });
    const client = await sdkClient(g.url);
    const first = await sendText(client, 'start the chain');
    expect(first.id).toBeTruthy();
    // depth 0 (an outside caller) → task at depth 1 → its call at depth 1 → task at depth 2 → its
    // call at depth 2 ≥ loop.max_depth: refused.
    await waitFor(async () => {
      const s = await states();
      return s.length === 3 && s.filter((x) => x === 'TASK_STATE_COMPLETED').length === 2 ? s : undefined;
    });
    expect(await states()).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED', 'TASK_STATE_REJECTED']);
    const tasks = g.gateway.kernel.ports.get(tasksPort) as TaskService;
    const launched = await tasks.list!({ limit: 10 });
    expect(launched.map((t) => t.lineage.depth).sort()).toEqual([1, 2]);
    const received = (await g.gateway.services.log.list({}))
      .map((e) => e.envelope)
      .filter((e) => e.type === 'agent.message.received');
    expect(received.map((e) => e.lineage.depth).sort()).toEqual([0, 1, 2]);
    const refused = received.find((e) => e.redacted_summary.rejected !== undefined)!;
    expect(refused.redacted_summary).toMatchObject({ rejected: 'depth_limit', limit: 2 });
    expect(refused.lineage.depth).toBe(2);
  });

  it('counts every new A2A task against loop.tenant_runs_per_day', async () => {
    g = await a2aGateway(dialect, {
      config: { loop: { tenant_runs_per_day: 1 } },
      a2a: { skills: [{ id: 'review', name: 'Review', description: 'Reviews', action: nodeSkill('ok') }] },
    });
    const client = await sdkClient(g.url);
    const send = async (text: string) =>
      (await client.sendMessage({
        tenant: '',
        message: userMessage(text),
        configuration: undefined,
        metadata: undefined,
      })) as Task;
    expect((await send('first')).status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = await send('second');
    expect(second.status!.state).toBe(TaskState.TASK_STATE_REJECTED);
    const text = second.status!.message!.parts[0]!.content;
    expect(text?.$case === 'text' && text.value).toContain('loop.tenant_runs_per_day');
    const tasks = g.gateway.kernel.ports.get(tasksPort) as TaskService;
    expect(await tasks.list!({ limit: 10 })).toHaveLength(1);
  });
});
