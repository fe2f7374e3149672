import { Task, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEnvelope, type EnvelopeInput } from '../envelope/index.js';
import type { Db, Sql } from '../store/port.js';
import { dialects, freshStore, type TestStore } from '../store/testing.js';
import { Updates, type Update } from './executor.js';
import { recordEnd } from './record.js';
import { stateName } from './states.js';
import { taskFromRow } from './store.js';
import { taskEventSubscriber } from './subscriber.js';
import * as q from './sql.js';

const DEFAULTS = { tenant_id: 'default', environment: 'test' };
const SB_TASK = 'task_01JTESTCHANGE0000000000000';

/**
 * A store whose transactions stop after their first read of an A2A task until `release` is called:
 * two writers then both hold the same snapshot of the row before either writes, the interleaving that
 * two gateways on PostgreSQL reach by chance.
 */
function pausingAfterRead(db: Db, arrived: () => void, release: Promise<void>): Db {
  let paused = false;
  const inTx = (tx: Db): Db =>
    new Proxy(tx, {
      get(target, key) {
        if (key === 'query')
          return async (s: Sql) => {
            const rows = await target.query(s);
            if (!paused && /^SELECT \* FROM a2a_tasks/.test(s.text)) {
              paused = true;
              arrived();
              await release;
            }
            return rows;
          };
        const v = Reflect.get(target, key, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  return new Proxy(db, {
    get(target, key) {
      if (key === 'tx') return (fn: (tx: Db) => Promise<unknown>) => target.tx((tx) => fn(inTx(tx)));
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function workingTask(db: Db, id: string): Promise<void> {
  const task: Task = {
    id,
    contextId: 'ctx',
    status: { state: TaskState.TASK_STATE_WORKING, timestamp: new Date(0).toISOString(), message: undefined },
    artifacts: [],
    history: [],
    metadata: { skill: 'review' },
  };
  await db.query(
    q.upsertTask({
      id,
      owner: 'bot',
      contextId: 'ctx',
      causeEventId: null,
      state: stateName(TaskState.TASK_STATE_WORKING),
      task: JSON.stringify(Task.toJSON(task)),
      now: 1,
    }),
  );
  await db.query(q.linkSwitchboardTask(id, SB_TASK));
}

describe.each(await dialects())('the A2A task state machine on %s', (dialect) => {
  let store: TestStore | undefined;
  afterEach(async () => {
    await store?.cleanup();
    store = undefined;
  });

  it('pushes one terminal state when the task-event subscriber and a recorded cancel end a task at once', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await workingTask(db, 'a2a-race');
    const pushes: { by: string; update: Update }[] = [];
    // On PostgreSQL both writers read the open row before either writes (two connections); SQLite has
    // one writer, so there they run one after the other and the second finds the task ended.
    const race = dialect === 'postgres';
    let arrivals = 0;
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    const arrived = () => {
      if (++arrivals === 2) release();
    };
    const dbFor = () => (race ? pausingAfterRead(db, arrived, released) : db);
    const emit = async (input: EnvelopeInput) => buildEnvelope(input, DEFAULTS);
    const subscriber = taskEventSubscriber({
      db: dbFor(),
      updates: new Updates(),
      now: () => 2,
      changed: async (_tx, _row, update) => {
        pushes.push({ by: 'subscriber', update });
      },
    });
    const completed = buildEnvelope(
      { type: 'agent.task.completed', execution: { task_id: SB_TASK }, redacted_summary: { exit_code: 0 } },
      DEFAULTS,
    );
    const [, recorded] = await Promise.all([
      subscriber.handle(completed),
      recordEnd(
        {
          db: dbFor(),
          log: { get: async () => undefined },
          emit,
          updates: new Updates(),
          pushed: async (_tx, _row, update) => {
            pushes.push({ by: 'record', update });
          },
          now: () => 3,
        },
        'a2a-race',
        { state: TaskState.TASK_STATE_CANCELED, reason: 'canceled by bot', by: 'bot' },
      ),
    ]);
    if (race) expect(arrivals).toBe(2);
    expect(pushes).toHaveLength(1);
    const pushed = pushes[0]!.update;
    expect(pushed.$case).toBe('statusUpdate');
    const state = pushed.$case === 'statusUpdate' ? pushed.value.status?.state : undefined;
    // The stored state is the one pushed, whichever writer won; the loser changed nothing.
    const row = (await db.query<q.A2ATaskRow>(q.selectTask('a2a-race')))[0]!;
    expect((await taskFromRow(row)).status?.state).toBe(state);
    expect(recorded).toBe(pushes[0]!.by === 'record');
  });

  it('never lets an SDK save end a task, swap its end, or reopen it', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await workingTask(db, 'a2a-save');
    const row = (await db.query<q.A2ATaskRow>(q.selectTask('a2a-save')))[0]!;
    const before = await taskFromRow(row);
    const as = (state: TaskState) =>
      q.upsertTask({
        id: row.id,
        owner: row.owner,
        contextId: row.context_id,
        causeEventId: null,
        state: stateName(state),
        task: JSON.stringify(
          Task.toJSON({ ...before, status: { state, timestamp: '', message: undefined } }),
        ),
        now: 5,
      });
    const stored = async () => (await db.query<q.A2ATaskRow>(q.selectTask('a2a-save')))[0]!.state;
    await db.query(as(TaskState.TASK_STATE_CANCELED));
    expect(await stored()).toBe('TASK_STATE_WORKING');
    await db.query(as(TaskState.TASK_STATE_INPUT_REQUIRED));
    expect(await stored()).toBe('TASK_STATE_INPUT_REQUIRED');
    await db.query(
      q.changeTask(
        row.id,
        {
          state: 'TASK_STATE_INPUT_REQUIRED',
          task: (await db.query<q.A2ATaskRow>(q.selectTask(row.id)))[0]!.task,
        },
        { state: 'TASK_STATE_COMPLETED', task: row.task },
        6,
      ),
    );
    expect(await stored()).toBe('TASK_STATE_COMPLETED');
    await db.query(as(TaskState.TASK_STATE_CANCELED));
    await db.query(as(TaskState.TASK_STATE_WORKING));
    expect(await stored()).toBe('TASK_STATE_COMPLETED');
  });
});
