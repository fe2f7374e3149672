import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import type { PostgresDb } from '../store/postgres.js';
import { AdvisoryLock } from './supervisor.js';
import { agentCommand, harness, launchRequest, type TasksHarness, taskEvents, waitFor } from './testing.js';

const MINUTE = 60_000;

describe.each(await dialects())('the stall supervisor (%s)', (dialect) => {
  let h: TasksHarness;
  let clock = Date.UTC(2026, 0, 1);
  beforeEach(async () => {
    clock = Date.UTC(2026, 0, 1);
    h = await harness(dialect, {
      now: () => clock,
      module: { leader: { acquire: async () => true, release: async () => {} } },
    });
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it('raises agent.task.stalled once per stall for a working task quiet for five minutes', async () => {
    const view = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    const sup = h.mod.supervisor!;
    clock += 4 * MINUTE;
    expect(await sup.tick()).toBe(0);
    clock += 2 * MINUTE;
    expect(await sup.tick()).toBe(1);
    clock += 10 * MINUTE;
    expect(await sup.tick()).toBe(0);
    const stalled = (await taskEvents(h, view.id)).filter((e) => e.type === 'agent.task.stalled');
    expect(stalled).toHaveLength(1);
    expect(stalled[0]?.redacted_summary).toMatchObject({
      quiet_seconds: 360,
      owner: 'alice',
      task_id: view.id,
    });
    expect(stalled[0]?.causation_id).toBe((await h.runner.row(view.id))?.cause_event_id);
  });

  it('reports a new stall after the task was active again', async () => {
    const view = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    const sup = h.mod.supervisor!;
    clock += 6 * MINUTE;
    expect(await sup.tick()).toBe(1);
    await h.runner.touch(view.id);
    clock += 1 * MINUTE;
    expect(await sup.tick()).toBe(0);
    clock += 5 * MINUTE;
    expect(await sup.tick()).toBe(1);
  });

  it('leaves finished tasks and tasks waiting for a person alone', async () => {
    const done = await h.runner.launch(await launchRequest(h, { type: 'notify' }));
    const waiting = await h.runner.launch(
      await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
    );
    await h.runner.onApproval(
      await h.t.services.emit({ type: 'agent.approval.requested', execution: { task_id: waiting.id } }),
    );
    clock += 60 * MINUTE;
    expect(await h.mod.supervisor!.tick()).toBe(0);
    expect((await taskEvents(h, done.id)).some((e) => e.type === 'agent.task.stalled')).toBe(false);
  });

  it('honours tasks.stall_after_seconds', async () => {
    await h.cleanup();
    h = await harness(dialect, {
      now: () => clock,
      config: { stall_after_seconds: 30 },
      module: { leader: { acquire: async () => true, release: async () => {} } },
    });
    await h.runner.launch(await launchRequest(h, { type: 'command', command: agentCommand('hang') }));
    clock += 31_000;
    expect(await h.mod.supervisor!.tick()).toBe(1);
  });

  it('does nothing on a tick where this replica is not the leader', async () => {
    await h.cleanup();
    h = await harness(dialect, {
      now: () => clock,
      module: { leader: { acquire: async () => false, release: async () => {} } },
    });
    await h.runner.launch(await launchRequest(h, { type: 'command', command: agentCommand('hang') }));
    clock += 60 * MINUTE;
    expect(await h.mod.supervisor!.tick()).toBe(0);
  });
});

describe.each(await dialects())('the supervisor loop in the module (%s)', (dialect) => {
  it('runs on its own, takes the leader lock, and stops with the module', async () => {
    let clock = Date.UTC(2026, 0, 1);
    const h = await harness(dialect, {
      now: () => clock,
      config: { supervisor_interval_seconds: 0.05 },
      module: { runSupervisor: true },
    });
    try {
      const view = await h.runner.launch(
        await launchRequest(h, { type: 'command', command: agentCommand('hang') }),
      );
      clock += 6 * MINUTE;
      await waitFor(async () =>
        (await taskEvents(h, view.id)).some((e) => e.type === 'agent.task.stalled') ? true : undefined,
      );
    } finally {
      await h.cleanup();
    }
  });
});

describe.skipIf(!(await dialects()).includes('postgres'))('the supervisor advisory lock (postgres)', () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await freshStore('postgres');
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('lets one replica lead, and the other take over once it releases', async () => {
    // A key of its own, so this test cannot collide with a real supervisor on the same server.
    const key = 0x51000000 + Math.floor(Math.random() * 0xffff);
    const db = store.db as PostgresDb;
    const other = (await store.reopen()) as PostgresDb;
    const a = new AdvisoryLock(db, key);
    const b = new AdvisoryLock(other, key);
    try {
      expect(await a.acquire()).toBe(true);
      expect(await a.acquire()).toBe(true);
      expect(await b.acquire()).toBe(false);
      await a.release();
      expect(await b.acquire()).toBe(true);
      expect(await a.acquire()).toBe(false);
    } finally {
      await a.release();
      await b.release();
      await other.close();
    }
  });
});
