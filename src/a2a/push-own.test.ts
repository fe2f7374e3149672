import { type Task, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects } from '../store/testing.js';
import {
  type A2AGateway,
  a2aGateway,
  type PushReceiver,
  pushReceiver,
  nodeSkill,
  sdkClient,
  userMessage,
  waitFor,
} from './testing.js';

/** A real process, a push receiver and two dialects on a shared 2-core machine: more than the default. */
const SLOW = 60_000;

describe.each(await dialects())('the ends the A2A layer records itself, on %s', (dialect) => {
  let g: A2AGateway | undefined;
  let r: PushReceiver | undefined;
  afterEach(async () => {
    await g?.stop();
    await r?.close();
    g = undefined;
    r = undefined;
  });

  const withPush = (url: string) => ({
    returnImmediately: false,
    acceptedOutputModes: [],
    taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url, token: '', authentication: undefined },
  });

  /** The states pushed for a task, in arrival order. */
  const pushed = (taskId: string) =>
    r!.bodies
      .map((b) => JSON.parse(b) as { statusUpdate?: { taskId: string; status: { state: string } } })
      .filter((b) => b.statusUpdate?.taskId === taskId)
      .map((b) => b.statusUpdate!.status.state);

  it(
    'pushes the FAILED of a skill whose launch is refused, once, with its event in the log',
    async () => {
      r = await pushReceiver();
      g = await a2aGateway(dialect, {
        config: { egress: { allow: ['127.0.0.1'] } },
        a2a: {
          skills: [
            // The launcher refuses a placeholder it does not know before any Switchboard task exists.
            {
              id: 'broken',
              name: 'Broken',
              description: 'x',
              action: { type: 'command', command: ['{{trusted.nope}}'] },
            },
          ],
        },
      });
      const client = await sdkClient(g.url);
      const task = (await client.sendMessage({
        tenant: '',
        message: userMessage('run it'),
        configuration: withPush(r.url),
        metadata: undefined,
      })) as Task;
      expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
      const text = task.status!.message!.parts[0]!.content;
      expect(text?.$case === 'text' && text.value).toContain('the skill could not be launched');
      await waitFor(() => pushed(task.id).includes('TASK_STATE_FAILED') || undefined);
      await new Promise((res) => setTimeout(res, 300));
      expect(pushed(task.id).filter((s) => s === 'TASK_STATE_FAILED')).toHaveLength(1);
      const events = (await g.gateway.services.log.list({})).map((e) => e.envelope);
      const failed = events.filter((e) => e.type === 'agent.a2a_task.failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]!.redacted_summary).toMatchObject({ a2a_task_id: task.id });
      // Caused by the message, in its chain.
      const received = events.find((e) => e.type === 'agent.message.received')!;
      expect(failed[0]!.causation_id).toBe(received.event_id);
      const after = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
      expect(after.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    },
    SLOW,
  );

  it(
    'pushes the FAILED of a next turn whose session cannot be resumed, once',
    async () => {
      r = await pushReceiver();
      g = await a2aGateway(dialect, {
        config: { egress: { allow: ['127.0.0.1'] } },
        a2a: { skills: [{ id: 'review', name: 'Review', description: 'x', action: nodeSkill('ok') }] },
      });
      const client = await sdkClient(g.url);
      const first = (await client.sendMessage({
        tenant: '',
        message: userMessage('review this'),
        configuration: undefined,
        metadata: undefined,
      })) as Task;
      expect(first.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
      // No session id was learned (no hooks ran), so the next turn cannot resume it.
      const second = (await client.sendMessage({
        tenant: '',
        message: { ...userMessage('and again'), contextId: first.contextId },
        configuration: withPush(r.url),
        metadata: undefined,
      })) as Task;
      expect(second.status!.state).toBe(TaskState.TASK_STATE_FAILED);
      await waitFor(() => pushed(second.id).includes('TASK_STATE_FAILED') || undefined);
      await new Promise((res) => setTimeout(res, 300));
      // The new task's SUBMITTED (pushed from the commit that wrote it), then its FAILED, once.
      expect(pushed(second.id)).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_FAILED']);
    },
    SLOW,
  );
});
