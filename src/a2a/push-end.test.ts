import { type Task, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import {
  type A2AGateway,
  a2aGateway,
  type PushReceiver,
  pushReceiver,
  sdkClient,
  userMessage,
  waitFor,
  sendText,
} from './testing.js';

describe.each(await dialects())('the end of a push config on %s', (dialect) => {
  let g: A2AGateway | undefined;
  let r: PushReceiver | undefined;
  afterEach(async () => {
    await g?.stop();
    await r?.close();
    g = undefined;
    r = undefined;
  });

  it('pushes nothing after the terminal push, and the configs go when the task is deleted', async () => {
    r = await pushReceiver();
    g = await a2aGateway(dialect, { config: { egress: { allow: ['127.0.0.1'] } } });
    const client = await sdkClient(g.url);
    const task = await sendText(client, 'push me until the end', {
      returnImmediately: false,
      push: { url: r.url, id: 'cfg-1' },
    });
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const bodies = r.bodies;
    await waitFor(() => bodies.some((b) => b.includes('TASK_STATE_COMPLETED')) || undefined);
    const db = g.gateway.services.db;
    const pushRows = async () =>
      Number(
        (
          await db.query<{ n: number }>({
            text: "SELECT COUNT(*) AS n FROM deliveries WHERE channel_type = 'a2a-push'",
          })
        )[0]!.n,
      );
    const before = await pushRows();
    // A report and a task event that come after the end (a late hook, a replayed event): the
    // subscriber handles both (its inbox marks them) and pushes neither.
    const sbTask = (
      await db.query<{ sb_task_id: string }>({
        text: 'SELECT sb_task_id FROM a2a_tasks WHERE id = $1',
        values: [task.id],
      })
    )[0]!.sb_task_id;
    const log = g.gateway.services.log;
    const late = [
      await log.append({
        type: 'agent.progress.reported',
        execution: { task_id: sbTask },
        redacted_summary: { stage: 'progress', summary: 'one more thing' },
      }),
      await log.append({
        type: 'agent.task.failed',
        execution: { task_id: sbTask },
        redacted_summary: { reason: 'a late failure' },
      }),
    ];
    log.notify();
    for (const e of late)
      await waitFor(async () => {
        const rows = await db.query({
          text: "SELECT 1 FROM inbox WHERE consumer = 'a2a.tasks' AND event_id = $1",
          values: [e.event_id],
        });
        return rows.length > 0 || undefined;
      });
    expect(await pushRows()).toBe(before);
    expect(bodies.some((b) => b.includes('one more thing') || b.includes('TASK_STATE_FAILED'))).toBe(false);
    const after = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
    expect(after.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The config is still readable after the end; deleting the task (an operator, a retention job)
    // deletes its configs with it.
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 10,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual(['cfg-1']);
    await db.query({ text: 'DELETE FROM a2a_tasks WHERE id = $1', values: [task.id] });
    const left = await db.query({
      text: 'SELECT id FROM a2a_push_configs WHERE task_id = $1',
      values: [task.id],
    });
    expect(left).toEqual([]);
  });

  it('pushes the REJECTED of a task refused before anything runs, to the config sent with the message', async () => {
    r = await pushReceiver();
    g = await a2aGateway(dialect, {
      config: { egress: { allow: ['127.0.0.1'] }, loop: { tenant_runs_per_day: 1 } },
    });
    const client = await sdkClient(g.url);
    const send = async (text: string) =>
      (await client.sendMessage({
        tenant: '',
        message: userMessage(text),
        configuration: {
          returnImmediately: false,
          acceptedOutputModes: [],
          taskPushNotificationConfig: {
            tenant: '',
            id: '',
            taskId: '',
            url: r!.url,
            token: '',
            authentication: undefined,
          },
        },
        metadata: undefined,
      })) as Task;
    expect((await send('first')).status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = await send('second, over the day');
    expect(second.status!.state).toBe(TaskState.TASK_STATE_REJECTED);
    const bodies = r.bodies;
    const pushed = await waitFor(() =>
      bodies
        .map((b) => JSON.parse(b) as { statusUpdate?: { taskId: string; status: { state: string } } })
        .find((b) => b.statusUpdate?.taskId === second.id),
    );
    expect(pushed.statusUpdate!.status.state).toBe('TASK_STATE_REJECTED');
  });
});
