import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../envelope/index.js';
import type { Db } from '../store/port.js';
import { dialects } from '../store/testing.js';
import { agentCommand, harness, launchRequest, settled, type TasksHarness, taskEvents } from './testing.js';

/** `LaunchRequest.started`: the launcher's record of the start, in the transaction that makes it. */
describe.each(await dialects())("the launcher's record of a run's start (%s)", (dialect) => {
  let h: TasksHarness;
  beforeEach(async () => {
    h = await harness(dialect);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it('runs inside the transaction that moves the task to working, with agent.task.started', async () => {
    const seen: { type: string; inTx: boolean; state: string | undefined }[] = [];
    const started = async (tx: Db, event: Envelope) => {
      const [row] = await tx.query<{ state: string }>({
        text: 'SELECT state FROM tasks WHERE id = $1',
        values: [event.execution.task_id],
      });
      seen.push({ type: event.type, inTx: tx.inTransaction, state: row?.state });
    };
    const req = await launchRequest(h, { type: 'command', command: agentCommand('ok') }, { started });
    const view = await h.runner.launch(req);
    expect(view.state).toBe('working');
    expect(seen).toEqual([{ type: 'agent.task.started', inTx: true, state: 'working' }]);
    // Only the start: the exit is not handed to it.
    expect((await settled(h.runner, view.id)).state).toBe('completed');
    expect(seen).toHaveLength(1);
  });

  it('records the start without it when it fails, even with a failed statement (PostgreSQL ends the transaction)', async () => {
    let calls = 0;
    const started = async (tx: Db) => {
      calls += 1;
      await tx.query({ text: 'SELECT nothing FROM no_such_table' });
    };
    const req = await launchRequest(h, { type: 'command', command: agentCommand('ok') }, { started });
    const view = await h.runner.launch(req);
    expect(view.state).toBe('working');
    expect(calls).toBe(1);
    expect((await settled(h.runner, view.id)).state).toBe('completed');
    const types = (await taskEvents(h, view.id)).map((e) => e.type);
    // One start, from the second transaction: the first one's event went with its rollback.
    expect(types.filter((t) => t === 'agent.task.started')).toHaveLength(1);
    expect(types).toContain('agent.task.completed');
  });

  it('writes the spawn mark with the task when asked: a launch stopped before its spawn reads as may-have-run', async () => {
    // A work dir that cannot be made: the launch fails after its task is recorded, before any spawn.
    const blocked = join(h.workDir, 'not-a-dir');
    writeFileSync(blocked, '');
    const b = await harness(dialect, { config: { work_dir: blocked } });
    try {
      const ask = async (spawn_mark_at_submit: boolean, key: string) => {
        const req = await launchRequest(
          b,
          { type: 'command', command: agentCommand('ok') },
          { launch_key: key, spawn_mark_at_submit },
        );
        expect((await b.runner.launch(req)).state).toBe('failed');
        return (await b.runner.findLaunch(key))?.started;
      };
      expect(await ask(true, 'early_1')).toBe(true);
      expect(await ask(false, 'late_1')).toBe(false);
    } finally {
      await b.cleanup();
    }
  });
});
