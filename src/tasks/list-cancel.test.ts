import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { agentCommand, harness, launchRequest, settled, type TasksHarness, taskEvents } from './testing.js';

/** The console's task list and its cancel button, through the tasks port. */
describe.each(await dialects())('listing and canceling tasks on %s', (dialect) => {
  let h: TasksHarness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it('lists the newest tasks first, by state, owner and runtime', async () => {
    h = await harness(dialect);
    const first = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('ok') }),
    );
    await settled(h.runner, first.id);
    const second = await h.runner.launch(
      await launchRequest(
        h,
        { type: 'command', command: agentCommand('hang'), runtime: 'codex' },
        { owner: 'bob' },
      ),
    );
    expect((await h.runner.list({ limit: 10 })).map((t) => t.id)).toEqual([second.id, first.id]);
    expect((await h.runner.list({ state: 'completed', limit: 10 })).map((t) => t.id)).toEqual([first.id]);
    expect((await h.runner.list({ owner: 'bob', limit: 10 })).map((t) => t.id)).toEqual([second.id]);
    expect((await h.runner.list({ runtime: 'codex', limit: 10 })).map((t) => t.id)).toEqual([second.id]);
    expect(await h.runner.list({ limit: 1 })).toHaveLength(1);
    await h.runner.cancel(second.id, { name: 'ops', role: 'admin' });
  });

  it('cancels a running task: canceled with its event first, then the process stops', async () => {
    h = await harness(dialect);
    const task = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    expect(task.state).toBe('working');
    const canceled = await h.runner.cancel(task.id, { name: 'ops', role: 'admin' });
    expect(canceled.state).toBe('canceled');
    await settled(h.runner, task.id);
    await new Promise<void>((resolve) => {
      const poll = () => (h.runner.running === 0 ? resolve() : setTimeout(poll, 25));
      poll();
    });
    expect((await h.runner.get(task.id))?.state).toBe('canceled');
    const types = (await taskEvents(h, task.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'agent.task.canceled')).toHaveLength(1);
    expect(types).not.toContain('agent.task.failed');
  });

  it('answers an ended task with a conflict and an unknown one with not found', async () => {
    h = await harness(dialect);
    const task = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('ok') }),
    );
    await settled(h.runner, task.id);
    await expect(h.runner.cancel(task.id, { name: 'ops', role: 'admin' })).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(
      h.runner.cancel('tsk_01JZZZZZZZZZZZZZZZZZZZZZZZ', { name: 'ops', role: 'admin' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
