import type { Artifact, Part, Task } from '@a2a-js/sdk';
import { type TaskState, TaskState as States } from './wire.js';
import type { Envelope } from '../envelope/index.js';
import { markProcessed, once } from '../log/inbox.js';
import type { Subscriber } from '../log/relay.js';
import type { Db } from '../store/port.js';
import { agentMessage, type Update, type Updates } from './executor.js';
import { stateForEvent, TASK_EVENTS } from './states.js';
import { type Change, changeTask } from './change.js';
import { EVENT_ID_KEY, taskFromRow } from './store.js';
import * as q from './sql.js';

export interface SubscriberDeps {
  db: Db;
  updates: Updates;
  now: () => number;
  /** The starts this process recorded in their launch's transaction (`startedInLaunch`). */
  startsHere?: StartsHere;
  /**
   * In the same transaction as the change: what else it causes (the push deliveries). `event` is the
   * task event or progress report, whose id keys everything caused by it.
   */
  changed?(tx: Db, row: q.A2ATaskRow, update: Update, event: Envelope): Promise<void>;
  /**
   * An approval's state (the approvals port), to tell whether an agent that exited while its task was
   * INPUT_REQUIRED had its answer. Absent without the approvals module (no approval can be pending).
   */
  approval?(id: string): Promise<SeenApproval | undefined>;
}

/** What the subscriber reads of an approval: its state and when it left `pending` (ISO). */
export interface SeenApproval {
  state: 'pending' | 'approved' | 'rejected' | 'expired';
  decided_at: string | null;
}

/** An approval's end: for a task whose agent exited waiting on it, the task's next state. */
const APPROVAL_ENDED = new Set([
  'agent.approval.approved',
  'agent.approval.rejected',
  'agent.approval.expired',
]);

/** Starts remembered at most (`StartsHere`): far more than are ever between a commit and its relay. */
const STARTS_HERE_MAX = 4_096;

/**
 * The `agent.task.started` events whose start `startedInLaunch` recorded and marked handled, once
 * their transaction committed, until the relay hands them to the subscriber: it skips them without a
 * transaction. Through `once` each was a transaction of its own that found the mark and wrote
 * nothing, a commit (and an fsync) per message in the window between the WORKING commit and its push
 * (bench `a2a-latency`). What a restart forgets, or another replica's relay hands over, still goes
 * through `once`, which finds the mark.
 */
export class StartsHere {
  private readonly ids = new Set<string>();

  add(eventId: string): void {
    if (this.ids.size >= STARTS_HERE_MAX) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    this.ids.add(eventId);
  }

  /** Whether the event's start was recorded here; forgotten once asked. */
  take(eventId: string): boolean {
    return this.ids.delete(eventId);
  }
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
    metadata: { [EVENT_ID_KEY]: event.event_id },
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
  const meta = { [EVENT_ID_KEY]: event.event_id };
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

/**
 * What an INPUT_REQUIRED task keeps in its metadata: the approval it waits on (from the
 * `agent.task.input_required` event), and whether its agent has exited waiting on it.
 */
const WAITS_ON = 'approval_id';
export const AGENT_EXITED = 'agent_exited';

/** The task's metadata for its new state: the waiting marks go when it leaves INPUT_REQUIRED. */
function metadataFor(task: Task, state: TaskState, event: Envelope): Record<string, unknown> | undefined {
  const meta: Record<string, unknown> = { ...(task.metadata ?? {}) };
  if (event.type === 'agent.task.input_required') {
    const id = (event.redacted_summary as Record<string, unknown>).approval_id;
    if (typeof id === 'string') meta[WAITS_ON] = id;
    delete meta[AGENT_EXITED];
  } else if (state !== States.TASK_STATE_INPUT_REQUIRED) {
    delete meta[WAITS_ON];
    delete meta[AGENT_EXITED];
  }
  return meta;
}

export function statusChange(
  row: q.A2ATaskRow,
  task: Task,
  event: Envelope,
  state: TaskState,
  text: string | undefined,
  metadata: Record<string, unknown> | undefined,
): { task: Task; update: Update } {
  const status = {
    state,
    timestamp: event.occurred_at,
    message: text ? agentMessage(row.id, row.context_id, text) : undefined,
  };
  return {
    task: { ...task, status, metadata },
    update: {
      $case: 'statusUpdate',
      value: {
        taskId: row.id,
        contextId: row.context_id,
        status,
        metadata: { [EVENT_ID_KEY]: event.event_id },
      },
    },
  };
}

/**
 * An agent exited 0 while its task was INPUT_REQUIRED (the Switchboard task's `agent.task.completed`).
 * If its approval was decided before the exit, the agent had its answer: COMPLETED. If the approval
 * was still pending, or decided only after the exit, the question was never answered to the agent:
 * the task stays INPUT_REQUIRED, and a message to it resumes the session (docs/a2a.md). If it was
 * withdrawn (expired undecided) after the exit, nothing can answer it: FAILED with the reason.
 * `input-exit.test.ts` runs each with a real process.
 */
function exitWhileWaiting(
  event: Envelope,
  row: q.A2ATaskRow,
  task: Task,
  seen: SeenApproval | undefined,
): { task: Task; update: Update } {
  const id = String(task.metadata?.[WAITS_ON] ?? 'unknown');
  const decidedAt = seen?.decided_at ? Date.parse(seen.decided_at) : undefined;
  const answered =
    seen && seen.state !== 'pending' && decidedAt !== undefined && decidedAt <= Date.parse(event.occurred_at);
  if (answered)
    return statusChange(
      row,
      task,
      event,
      States.TASK_STATE_COMPLETED,
      undefined,
      metadataFor(task, States.TASK_STATE_COMPLETED, event),
    );
  if (seen?.state === 'expired')
    return statusChange(
      row,
      task,
      event,
      States.TASK_STATE_FAILED,
      `the agent exited waiting for approval ${id}, which then expired undecided; nothing can answer it now`,
      metadataFor(task, States.TASK_STATE_FAILED, event),
    );
  const text =
    seen && seen.state !== 'pending'
      ? `approval ${id} was ${seen.state} after the agent exited waiting for it; send a message to this task to continue its session`
      : `the agent exited while approval ${id} was pending; send a message to this task to continue its session`;
  return statusChange(row, task, event, States.TASK_STATE_INPUT_REQUIRED, text, {
    ...(task.metadata ?? {}),
    [AGENT_EXITED]: seen?.state ?? 'pending',
  });
}

/**
 * An approval ended after its agent exited waiting on it (the task held INPUT_REQUIRED): expired
 * (withdrawn undecided) fails the task; a decision is said in the status message, and the task still
 * waits for the message that resumes its session. For a running agent it changes nothing here: the
 * agent hears the answer, and the tasks module records the return to WORKING (`agent.task.resumed`).
 */
function approvalChange(
  event: Envelope,
  row: q.A2ATaskRow,
  task: Task,
): { task: Task; update: Update } | undefined {
  const s = event.redacted_summary as Record<string, unknown>;
  const meta = task.metadata ?? {};
  if (task.status?.state !== States.TASK_STATE_INPUT_REQUIRED || meta[WAITS_ON] !== s.approval_id)
    return undefined;
  const exited = meta[AGENT_EXITED];
  const outcome = event.type.slice('agent.approval.'.length);
  if (exited === undefined || exited === outcome) return undefined;
  const id = String(s.approval_id);
  if (outcome === 'expired') {
    const why = typeof s.reason === 'string' ? ` (${s.reason})` : '';
    return statusChange(
      row,
      task,
      event,
      States.TASK_STATE_FAILED,
      `approval ${id} expired undecided${why} after the agent exited waiting for it; nothing can answer it now`,
      metadataFor(task, States.TASK_STATE_FAILED, event),
    );
  }
  return statusChange(
    row,
    task,
    event,
    States.TASK_STATE_INPUT_REQUIRED,
    `approval ${id} was ${outcome} after the agent exited waiting for it; send a message to this task to continue its session`,
    { ...meta, [AGENT_EXITED]: outcome },
  );
}

/** The new state a task event makes (an ended task never changes: `change.ts`). */
function taskEventChange(
  event: Envelope,
  row: q.A2ATaskRow,
  task: Task,
  seen: SeenApproval | undefined,
): { task: Task; update: Update } | undefined {
  // Every A2A task is written SUBMITTED when it is made (the executor), so `submitted` has nothing to
  // say, and relayed after the run's start was recorded in the launch's own transaction (on
  // PostgreSQL the relay claims it after that commit) it would move the task back from WORKING.
  if (event.type === 'agent.task.submitted') return undefined;
  const state = stateForEvent(event.type)!;
  if (event.type === 'agent.task.completed' && task.status?.state === States.TASK_STATE_INPUT_REQUIRED)
    return exitWhileWaiting(event, row, task, seen);
  return statusChange(row, task, event, state, statusText(event), metadataFor(task, state, event));
}

/**
 * The change an event makes to its open A2A task: a progress report's status or artifact, an
 * approval's end for a task whose agent exited waiting on it, a task event's new state.
 */
export function eventChange(
  event: Envelope,
  row: q.A2ATaskRow,
  task: Task,
  seen: SeenApproval | undefined,
): Change | undefined {
  if (event.type === PROGRESS_REPORTED) return reportChange(event, row, task);
  if (APPROVAL_ENDED.has(event.type)) return approvalChange(event, row, task);
  return taskEventChange(event, row, task, seen);
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
    accepts: (type) => TASK_EVENTS.has(type) || type === PROGRESS_REPORTED || APPROVAL_ENDED.has(type),
    ownsInbox: true,
    handle: async (event) => {
      if (event.type === 'agent.task.started' && d.startsHere?.take(event.event_id)) return;
      const report = event.type === PROGRESS_REPORTED;
      const approvalEnded = APPROVAL_ENDED.has(event.type);
      const sbTask = event.execution.task_id;
      if (approvalEnded && !sbTask) return;
      // A report names its Switchboard task; a task event is found by it too once linked (a resumed
      // run's events belong to the newest A2A task), and by its cause (the A2A message) before that.
      const finds = [
        sbTask ? q.selectTaskBySwitchboardTask(sbTask) : undefined,
        !report && !approvalEnded && event.causation_id ? q.selectTaskByCause(event.causation_id) : undefined,
      ].filter((x) => x !== undefined);
      if (finds.length === 0) return;
      // A new task is SUBMITTED from the start, its push sent from the executor's commit: the
      // Switchboard task's `submitted` changes nothing (`taskEventChange`), so it costs no transaction.
      if (event.type === 'agent.task.submitted') return;
      // Read outside the transaction: an approval's end matters only to a task whose agent exited
      // waiting on it, and an exit while INPUT_REQUIRED needs its approval's state.
      let seen: SeenApproval | undefined;
      if (approvalEnded || event.type === 'agent.task.completed') {
        const pre = sbTask
          ? (await d.db.query<q.A2ATaskRow>(q.selectTaskBySwitchboardTask(sbTask)))[0]
          : undefined;
        const waiting = pre ? await taskFromRow(pre) : undefined;
        const waitsOn =
          waiting?.status?.state === States.TASK_STATE_INPUT_REQUIRED
            ? waiting.metadata?.[WAITS_ON]
            : undefined;
        if (approvalEnded && (waitsOn === undefined || waiting?.metadata?.[AGENT_EXITED] === undefined))
          return;
        if (typeof waitsOn === 'string' && !approvalEnded) seen = await d.approval?.(waitsOn);
      }
      const done = await once(
        d.db,
        SUBSCRIBER,
        event.event_id,
        async (tx) => {
          let row: q.A2ATaskRow | undefined;
          for (const find of finds) row ??= (await tx.query<q.A2ATaskRow>(find))[0];
          if (!row) return undefined;
          const made = await changeTask(
            tx,
            row,
            (r, current) => eventChange(event, r, current, seen),
            d.now(),
          );
          if (!made) return undefined;
          if (!row.sb_task_id && event.execution.task_id)
            await tx.query(q.linkSwitchboardTask(row.id, event.execution.task_id));
          await d.changed?.(tx, made.row, made.change.update, event);
          return made.change.update;
        },
        d.now(),
      );
      if (done.ran && done.value) d.updates.emit(done.value);
    },
  };
}

/**
 * The start of a run the executor launched (`agent.task.started`), recorded in the tasks module's
 * transaction that makes it (`LaunchRequest.started`), as the subscriber would record it once the relay
 * handed the event over: the WORKING state, the task's link to its Switchboard task, the pushes (sent
 * by this process right after the commit) and the subscriber's inbox mark commit with the task event,
 * so nothing between the spawn and the push waits for the relay or a claim (bench `a2a-latency`). Only
 * the start: what follows it (reports, the exit) is the subscriber's, in the log's order, so the end is
 * always recorded after the run's last report. A task that has ended (a cancel won) is only marked.
 */
export async function startedInLaunch(
  d: Pick<SubscriberDeps, 'updates' | 'now' | 'changed' | 'startsHere'>,
  tx: Db,
  a2aTaskId: string,
  event: Envelope,
): Promise<void> {
  if (event.type !== 'agent.task.started') return;
  const row = (await tx.query<q.A2ATaskRow>(q.selectTask(a2aTaskId)))[0];
  if (!row) return; // not an A2A task of this gateway's: the subscriber's lookup decides
  const made = await changeTask(tx, row, (r, current) => eventChange(event, r, current, undefined), d.now());
  // The event was appended in this transaction: nobody can have handled it yet.
  await markProcessed(tx, SUBSCRIBER, event.event_id, d.now());
  tx.afterCommit(() => d.startsHere?.add(event.event_id));
  if (!row.sb_task_id && event.execution.task_id)
    await tx.query(q.linkSwitchboardTask(row.id, event.execution.task_id));
  if (!made) return;
  await d.changed?.(tx, made.row, made.change.update, event);
  const update = made.change.update;
  tx.afterCommit(() => d.updates.emit(update));
}
