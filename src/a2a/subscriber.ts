import { type Artifact, type Part, Task, type TaskState, TaskState as States } from '@a2a-js/sdk';
import type { Envelope } from '../envelope/index.js';
import { once } from '../log/inbox.js';
import type { Subscriber } from '../log/relay.js';
import type { Db } from '../store/port.js';
import { agentMessage, type Update, type Updates } from './executor.js';
import { isTerminal, stateForEvent, stateName, TASK_EVENTS } from './states.js';
import { taskFromRow } from './store.js';
import * as q from './sql.js';

export interface SubscriberDeps {
  db: Db;
  updates: Updates;
  now: () => number;
  /**
   * In the same transaction as the change: what else it causes (the push deliveries). `event` is the
   * task event or progress report, whose id keys everything caused by it.
   */
  changed?(tx: Db, row: q.A2ATaskRow, update: Update, event: Envelope): Promise<void>;
}

export const SUBSCRIBER = 'a2a.tasks';
/** What a launched agent's `report_progress` records (notify's `POST /v1/progress` and MCP tool). */
export const PROGRESS_REPORTED = 'agent.progress.reported';

/** A human line for the states that end a task or wait for someone, from the task event's summary. */
function statusText(event: Envelope): string | undefined {
  const s = event.redacted_summary as Record<string, unknown>;
  if (event.type === 'agent.task.failed' && typeof s.reason === 'string') return s.reason;
  if (event.type === 'agent.task.canceled')
    return `canceled by ${typeof s.by === 'string' ? s.by : 'a person'}`;
  return undefined;
}

function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  };
}

/** A `done` report as the task's artifact: its summary, and its link when it gave one. */
function doneArtifact(event: Envelope, summary: string, link: unknown): Artifact {
  const parts = [textPart(summary)];
  if (typeof link === 'string' && link !== '')
    parts.push({ content: { $case: 'url', value: link }, metadata: undefined, filename: '', mediaType: '' });
  return {
    artifactId: event.event_id,
    name: 'result',
    description: 'the summary and artifact of the agent\'s "done" report',
    parts,
    metadata: { switchboard_event_id: event.event_id },
    extensions: [],
  };
}

/**
 * The change a progress report makes: a `done` report adds the task's artifact; any other is the
 * task's status message (WORKING, or still INPUT_REQUIRED while an approval is pending). A report
 * the notify gate blocked (it carried a secret) changes nothing.
 */
function reportChange(
  event: Envelope,
  row: q.A2ATaskRow,
  task: Task,
): { task: Task; update: Update } | undefined {
  const s = event.redacted_summary as Record<string, unknown>;
  if (s.blocked === true || typeof s.summary !== 'string') return undefined;
  const meta = { switchboard_event_id: event.event_id };
  if (s.stage === 'done') {
    const artifact = doneArtifact(event, s.summary, s.artifact);
    return {
      task: { ...task, artifacts: [...task.artifacts, artifact] },
      update: {
        $case: 'artifactUpdate',
        value: {
          taskId: row.id,
          contextId: row.context_id,
          artifact,
          append: false,
          lastChunk: true,
          metadata: meta,
        },
      },
    };
  }
  const current = task.status?.state;
  const state: TaskState = current === States.TASK_STATE_INPUT_REQUIRED ? current : States.TASK_STATE_WORKING;
  const status = {
    state,
    timestamp: event.occurred_at,
    message: agentMessage(row.id, row.context_id, s.summary),
  };
  return {
    task: { ...task, status },
    update: {
      $case: 'statusUpdate',
      value: { taskId: row.id, contextId: row.context_id, status, metadata: meta },
    },
  };
}

/** The new state a task event makes; an ended task never moves to another state. */
function taskEventChange(
  event: Envelope,
  row: q.A2ATaskRow,
  task: Task,
): { task: Task; update: Update } | undefined {
  const state = stateForEvent(event.type)!;
  if (isTerminal(task.status?.state) && task.status?.state !== state) return undefined;
  const text = statusText(event);
  const status = {
    state,
    timestamp: event.occurred_at,
    message: text ? agentMessage(row.id, row.context_id, text) : undefined,
  };
  return {
    task: { ...task, status },
    update: {
      $case: 'statusUpdate',
      value: {
        taskId: row.id,
        contextId: row.context_id,
        status,
        metadata: { switchboard_event_id: event.event_id },
      },
    },
  };
}

/**
 * Task events and progress reports into A2A task changes: the durable path. Each event is handled
 * once (its inbox mark commits with the change and what it causes); a waiting run in this process
 * hears of it after the commit. An event finds its A2A task by its Switchboard task (the newest A2A
 * task linked to it), a task event before the link by its causation (the A2A message); an event of no
 * A2A task is someone else's.
 */
export function taskEventSubscriber(d: SubscriberDeps): Subscriber {
  return {
    name: SUBSCRIBER,
    accepts: (type) => TASK_EVENTS.has(type) || type === PROGRESS_REPORTED,
    ownsInbox: true,
    handle: async (event) => {
      const report = event.type === PROGRESS_REPORTED;
      const sbTask = event.execution.task_id;
      // A report names its Switchboard task; a task event is found by it too once linked (a resumed
      // run's events belong to the newest A2A task), and by its cause (the A2A message) before that.
      const finds = [
        sbTask ? q.selectTaskBySwitchboardTask(sbTask) : undefined,
        !report && event.causation_id ? q.selectTaskByCause(event.causation_id) : undefined,
      ].filter((x) => x !== undefined);
      if (finds.length === 0) return;
      const done = await once(
        d.db,
        SUBSCRIBER,
        event.event_id,
        async (tx) => {
          let row: q.A2ATaskRow | undefined;
          for (const find of finds) row ??= (await tx.query<q.A2ATaskRow>(find))[0];
          if (!row) return undefined;
          const current = taskFromRow(row);
          // Nothing an agent reports changes a task that has ended.
          if (report && isTerminal(current.status?.state)) return undefined;
          const change = (report ? reportChange : taskEventChange)(event, row, current);
          if (!change) return undefined;
          await tx.query(
            q.upsertTask({
              id: row.id,
              owner: row.owner,
              contextId: row.context_id,
              causeEventId: row.cause_event_id,
              state: stateName(change.task.status?.state),
              task: JSON.stringify(Task.toJSON(change.task)),
              now: d.now(),
            }),
          );
          if (!row.sb_task_id && event.execution.task_id)
            await tx.query(q.linkSwitchboardTask(row.id, event.execution.task_id));
          await d.changed?.(tx, row, change.update, event);
          return change.update;
        },
        d.now(),
      );
      if (done.ran && done.value) d.updates.emit(done.value);
    },
  };
}
