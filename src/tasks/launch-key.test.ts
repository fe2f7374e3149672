import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { agentCommand, harness, launchRequest, settled, type TasksHarness } from './testing.js';

describe.each(await dialects())('a launch key (%s)', (dialect) => {
  let h: TasksHarness;
  beforeEach(async () => {
    h = await harness(dialect);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const count = async () =>
    Number(
      (await h.t.services.db.query<{ n: number }>({ text: 'SELECT COUNT(*) AS n FROM tasks' }))[0]?.n ?? 0,
    );

  it('returns the first task to a second launch with the same key, and runs nothing again', async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: agentCommand('ok') },
      { launch_key: 'run_1' },
    );
    const first = await h.runner.launch(req);
    const again = await h.runner.launch(req);
    expect(again.id).toBe(first.id);
    expect(await count()).toBe(1);
    expect((await settled(h.runner, first.id)).state).toBe('completed');
    expect(await h.runner.findLaunch('run_1')).toMatchObject({ task: { id: first.id }, started: true });
  });

  it('lets two racing launches with one key make one task and start one process', async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: agentCommand('ok') },
      { launch_key: 'run_2' },
    );
    const [a, b] = await Promise.all([h.runner.launch(req), h.runner.launch(req)]);
    expect(a.id).toBe(b.id);
    expect(await count()).toBe(1);
    const started = await h.t.services.log.list({ type: 'agent.task.started', limit: 10 });
    expect(started).toHaveLength(1);
  });

  it('says nothing ran when the task was recorded but its process never spawned', async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: ['/nonexistent/agent'] },
      { launch_key: 'run_3' },
    );
    // A process that fails to spawn was still about to run: `started` is the conservative answer.
    await h.runner.launch(req);
    expect((await h.runner.findLaunch('run_3'))?.started).toBe(true);
    await h.t.services.db.query({ text: 'UPDATE tasks SET spawn_at = NULL' });
    expect((await h.runner.findLaunch('run_3'))?.started).toBe(false);
    expect(await h.runner.findLaunch('run_unknown')).toBeUndefined();
  });

  it('keeps launches without a key independent, as before', async () => {
    const req = await launchRequest(h, { type: 'notify' });
    const a = await h.runner.launch(req);
    const b = await h.runner.launch(req);
    expect(a.id).not.toBe(b.id);
    expect(await count()).toBe(2);
  });
});
