import { Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Envelope } from '../envelope/index.js';
import { once } from '../log/inbox.js';
import type { Subscriber } from '../log/relay.js';
import type { Db } from '../store/port.js';
import { agentMessage, type Updates } from './executor.js';
import { isTerminal, stateForEvent, stateName, TASK_EVENTS } from './states.js';
import { taskFromRow } from './store.js';
import * as q from './sql.js';

export interface SubscriberDeps {
  db: Db;
  updates: Updates;
  now: () => number;
  /**
   * In the same transaction as the new state: what else the change causes (the push deliveries).
   * `event` is the task event, whose id keys everything caused by it.
   */
  changed?(tx: Db, row: q.A2ATaskRow, update: TaskStatusUpdateEvent, event: Envelope): Promise<void>;
}

export const SUBSCRIBER = 'a2a.tasks';

/** A human line for the states that end a task or wait for someone, from the task event's summary. */
function statusText(event: Envelope): string | undefined {
  const s = event.redacted_summary as Record<string, unknown>;
  if (event.type === 'agent.task.failed' && typeof s.reason === 'string') return s.reason;
  if (event.type === 'agent.task.canceled')
    return `canceled by ${typeof s.by === 'string' ? s.by : 'a person'}`;
  return undefined;
}

/**
 * Task events into A2A task states: the durable path. Each event is handled once (its inbox mark
 * commits with the new state and what it causes); a waiting run in this process hears of it after
 * the commit. An event whose causation is not an A2A message is someone else's task.
 */
export function taskEventSubscriber(d: SubscriberDeps): Subscriber {
  return {
    name: SUBSCRIBER,
    accepts: (type) => TASK_EVENTS.has(type),
    ownsInbox: true,
    handle: async (event) => {
      const state = stateForEvent(event.type);
      if (state === undefined || !event.causation_id) return;
      const done = await once(
        d.db,
        SUBSCRIBER,
        event.event_id,
        async (tx) => {
          const row = (await tx.query<q.A2ATaskRow>(q.selectTaskByCause(event.causation_id!)))[0];
          if (!row) return undefined;
          const task = taskFromRow(row);
          if (isTerminal(task.status?.state) && task.status?.state !== state) return undefined;
          const text = statusText(event);
          const status = {
            state,
            timestamp: event.occurred_at,
            message: text ? agentMessage(row.id, row.context_id, text) : undefined,
          };
          const update: TaskStatusUpdateEvent = {
            taskId: row.id,
            contextId: row.context_id,
            status,
            metadata: { switchboard_event_id: event.event_id },
          };
          await tx.query(
            q.upsertTask({
              id: row.id,
              owner: row.owner,
              contextId: row.context_id,
              causeEventId: row.cause_event_id,
              state: stateName(state),
              task: JSON.stringify(Task.toJSON({ ...task, status })),
              now: d.now(),
            }),
          );
          if (!row.sb_task_id && event.execution.task_id)
            await tx.query(q.linkSwitchboardTask(row.id, event.execution.task_id));
          await d.changed?.(tx, row, update, event);
          return update;
        },
        d.now(),
      );
      if (done.ran && done.value) d.updates.emit(done.value);
    },
  };
}
