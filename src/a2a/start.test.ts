import { Task, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import { Updates } from './executor.js';
import { taskEventSubscriber } from './subscriber.js';
import * as q from './sql.js';
import {
  type A2AGateway,
  a2aGateway,
  nodeSkill,
  type PushReceiver,
  pushReceiver,
  sdkClient,
  sendText,
  waitFor,
} from './testing.js';

/**
 * A launched run's start is recorded in the tasks module's transaction (`startedInLaunch`): WORKING,
 * its push row (sent at once) and the subscriber's inbox mark commit with `agent.task.started`. On
 * PostgreSQL the relay hands `agent.task.submitted` over after that commit, and the SDK saves the
 * task it was first handed, SUBMITTED, whenever its turn comes: neither may move the task back
 * (a task launched with `returnImmediately` once never showed WORKING that way).
 */
describe.each(await dialects())("a run's start recorded in its launch's transaction on %s", (dialect) => {
  let g: A2AGateway | undefined;
  let r: PushReceiver | undefined;
  afterEach(async () => {
    await g?.stop();
    await r?.close();
    g = undefined;
    r = undefined;
  });

  it("writes the Switchboard task in the message's transaction (linked, its submitted event logged) by the answer, and the SDK's save after WORKING writes nothing", async () => {
    g = await a2aGateway(dialect, {
      a2a: {
        skills: [{ id: 'review', name: 'Review', description: 'Hangs', action: nodeSkill('hang') }],
      },
    });
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'hold on');
    const db = g.gateway.services.db;
    // Read at once, before the run's start could have linked it.
    const row = (await db.query<q.A2ATaskRow>(q.selectTask(sent.id)))[0]!;
    expect(row.sb_task_id).toBeTruthy();
    const events = (await g.gateway.services.log.list({ taskId: row.sb_task_id! })).map((e) => e.envelope);
    const submitted = events.find((e) => e.type === 'agent.task.submitted')!;
    expect(submitted.causation_id).toBe(row.cause_event_id);
    await waitFor(async () => {
      const t = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      return t.status!.state === TaskState.TASK_STATE_WORKING || undefined;
    });
    // The SDK's save after WORKING (its task, the update's metadata merged in) writes nothing.
    await new Promise((done) => setTimeout(done, 300));
    const after = (await db.query<q.A2ATaskRow>(q.selectTask(sent.id)))[0]!;
    expect(after.state).toBe('TASK_STATE_WORKING');
    expect(JSON.parse(after.task).metadata).toEqual({ skill: 'review' });
    await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
  });

  it('shows and pushes WORKING once, and a submitted event or the first snapshot relayed after it never undo it', async () => {
    r = await pushReceiver();
    g = await a2aGateway(dialect, {
      config: { egress: { allow: ['127.0.0.1'] } },
      a2a: {
        skills: [{ id: 'review', name: 'Review', description: 'Hangs', action: nodeSkill('hang') }],
      },
    });
    const client = await sdkClient(g.url);
    const sent = await sendText(client, 'hold on', { push: { url: r.url } });
    const state = async () =>
      (await client.getTask({ tenant: '', id: sent.id, historyLength: undefined })).status!.state;
    await waitFor(async () => (await state()) === TaskState.TASK_STATE_WORKING || undefined);
    const bodies = r.bodies;
    const working = () => bodies.filter((b) => b.includes('TASK_STATE_WORKING')).length;
    await waitFor(() => working() === 1 || undefined);

    const db = g.gateway.services.db;
    const row = (await db.query<q.A2ATaskRow>(q.selectTask(sent.id)))[0]!;
    expect(row.sb_task_id).toBeTruthy();
    const events = (await g.gateway.services.log.list({ taskId: row.sb_task_id! })).map((e) => e.envelope);
    const started = events.find((e) => e.type === 'agent.task.started')!;
    const submitted = events.find((e) => e.type === 'agent.task.submitted')!;
    // The push row and the inbox mark of the start are the launch transaction's, sent with no claim.
    const push = await waitFor(async () => {
      const [d] = await db.query<{ status: string; attempts: number }>({
        text: 'SELECT status, attempts FROM deliveries WHERE event_id = $1',
        values: [started.event_id],
      });
      return d?.status === 'succeeded' ? d : undefined;
    });
    expect(Number(push.attempts)).toBe(1);
    const marked = await db.query({
      text: 'SELECT event_id FROM inbox WHERE consumer = $1 AND event_id = $2',
      values: ['a2a.tasks', started.event_id],
    });
    expect(marked).toHaveLength(1);

    // PostgreSQL's order: the submitted event relayed after the start's commit (not yet handled:
    // its mark, if an earlier hand-off left one, is taken away) changes nothing.
    await db.query({
      text: 'DELETE FROM inbox WHERE consumer = $1 AND event_id = $2',
      values: ['a2a.tasks', submitted.event_id],
    });
    const subscriber = taskEventSubscriber({ db, updates: new Updates(), now: Date.now });
    await subscriber.handle(submitted);
    // The SDK's save of the SUBMITTED task it was handed first, after the start: refused.
    await db.query(
      q.upsertTask({
        id: row.id,
        owner: row.owner,
        contextId: row.context_id,
        causeEventId: null,
        state: 'TASK_STATE_SUBMITTED',
        task: JSON.stringify(Task.toJSON(sent)),
        now: Date.now(),
      }),
    );
    expect(sent.status!.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect((await db.query<q.A2ATaskRow>(q.selectTask(row.id)))[0]!.state).toBe('TASK_STATE_WORKING');
    expect(await state()).toBe(TaskState.TASK_STATE_WORKING);
    await new Promise((done) => setTimeout(done, 300));
    expect(working()).toBe(1);
    await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    await waitFor(() => bodies.some((b) => b.includes('TASK_STATE_CANCELED')) || undefined);
  });
});
