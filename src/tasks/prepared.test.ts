import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Envelope } from '../envelope/index.js';
import { dialects } from '../store/testing.js';
import { agentCommand, harness, launchRequest, settled, type TasksHarness } from './testing.js';

describe.each(await dialects())(
  'a launch in two steps, and the launcher hook on its changes (%s)',
  (dialect) => {
    let h: TasksHarness;
    beforeEach(async () => {
      h = await harness(dialect);
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const rows = () =>
      h.t.services.db.query<{ id: string; state: string; spawn_at: number | null }>({
        text: 'SELECT id, state, spawn_at FROM tasks',
      });

    it("records the task, its submitted event and its spawn mark in the caller's transaction, then runs it", async () => {
      const req = await launchRequest(
        h,
        { type: 'command', command: agentCommand('ok') },
        { launch_key: 'two_1' },
      );
      const seen: { type: string; inTx: boolean }[] = [];
      const { cause, untrusted, ...rest } = req;
      const prepared = h.runner.prepareLaunch({
        ...rest,
        changed: async (tx, event: Envelope) => {
          seen.push({ type: event.type, inTx: tx.inTransaction });
        },
      })!;
      const view = await h.t.services.db.tx(async (tx) => prepared.record(tx, { cause, untrusted }));
      const [row] = await rows();
      expect(row).toMatchObject({ id: view.id, state: 'submitted' });
      expect(row!.spawn_at).not.toBeNull();
      expect((await h.runner.findLaunch('two_1'))?.started).toBe(true);
      await prepared.start();
      expect((await settled(h.runner, view.id)).state).toBe('completed');
      // WORKING at the spawn and the end at the exit, each inside the transaction that records it.
      expect(seen).toEqual([
        { type: 'agent.task.started', inTx: true },
        { type: 'agent.task.completed', inTx: true },
      ]);
    });

    it('leaves nothing when the caller rolls its transaction back, and refuses a bad action before any write', async () => {
      const req = await launchRequest(h, { type: 'command', command: agentCommand('ok') });
      const { cause, untrusted, ...rest } = req;
      const prepared = h.runner.prepareLaunch(rest)!;
      await expect(
        h.t.services.db.tx(async (tx) => {
          await prepared.record(tx, { cause, untrusted });
          throw new Error('the caller changed its mind');
        }),
      ).rejects.toThrow('changed its mind');
      expect(await rows()).toHaveLength(0);
      expect(() =>
        h.runner.prepareLaunch({ ...rest, action: { type: 'command', command: ['{{trusted.nope}}'] } }),
      ).toThrow(/nope/);
      expect(h.runner.prepareLaunch({ ...rest, action: { type: 'notify' } })).toBeUndefined();
    });
  },
);
