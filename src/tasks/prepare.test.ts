import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PreparedLaunch } from '../tasks/port.js';
import { dialects } from '../store/testing.js';
import { agentCommand, harness, launchRequest, settled, type TasksHarness, taskEvents } from './testing.js';

/** `prepareLaunch`: a command task written in the caller's transaction, started after its commit. */
describe.each(await dialects())("a launch prepared in the caller's transaction (%s)", (dialect) => {
  let h: TasksHarness;
  beforeEach(async () => {
    h = await harness(dialect);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it("records the task with the caller's writes, and runs nothing until start", async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: agentCommand('ok') },
      { launch_key: 'prep_1', spawn_mark_at_submit: true },
    );
    const db = h.t.services.db;
    const prepared = await db.tx(async (tx) => {
      const p = await h.runner.prepareLaunch(tx, req);
      // The caller's own write beside it: both or neither.
      await tx.query({ text: 'SELECT 1 AS one' });
      return p;
    });
    expect(prepared.task?.state).toBe('submitted');
    const id = prepared.task!.id;
    expect((await h.runner.findLaunch('prep_1'))?.started).toBe(true);
    expect(h.runner.running).toBe(0);
    expect((await taskEvents(h, id)).map((e) => e.type)).toEqual(['agent.task.submitted']);
    expect((await prepared.start()).state).toBe('working');
    expect((await settled(h.runner, id)).state).toBe('completed');
    expect((await taskEvents(h, id)).map((e) => e.type)).toEqual([
      'agent.task.submitted',
      'agent.task.started',
      'agent.task.completed',
    ]);
  });

  it("leaves no task when the caller's transaction rolls back", async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: agentCommand('ok') },
      { launch_key: 'prep_2' },
    );
    let prepared: PreparedLaunch | undefined;
    await expect(
      h.t.services.db.tx(async (tx) => {
        prepared = await h.runner.prepareLaunch(tx, req);
        throw new Error('the caller changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    expect(prepared?.task).toBeDefined();
    expect(await h.runner.findLaunch('prep_2')).toBeUndefined();
    expect(await h.runner.list({ limit: 10 })).toEqual([]);
  });

  it('writes nothing for a command that does not render, and start rejects as launch would', async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: agentCommand('ok', '{{untrusted.text}}') },
      { launch_key: 'prep_3' },
    );
    const prepared = await h.t.services.db.tx((tx) => h.runner.prepareLaunch(tx, req));
    expect(prepared.task).toBeUndefined();
    await expect(prepared.start()).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await h.runner.findLaunch('prep_3')).toBeUndefined();
  });

  it('hands back the first task for a key already launched, and start runs nothing', async () => {
    const req = await launchRequest(
      h,
      { type: 'command', command: agentCommand('ok') },
      { launch_key: 'prep_4' },
    );
    const first = await h.runner.launch(req);
    const prepared = await h.t.services.db.tx((tx) => h.runner.prepareLaunch(tx, req));
    expect(prepared.task?.id).toBe(first.id);
    expect((await prepared.start()).id).toBe(first.id);
    await settled(h.runner, first.id);
    const started = (await taskEvents(h, first.id)).filter((e) => e.type === 'agent.task.started');
    expect(started).toHaveLength(1);
  });
});
