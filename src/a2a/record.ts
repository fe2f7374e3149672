import type { TaskState as States } from '@a2a-js/sdk';
import { TaskState } from './wire.js';
import { causedBy, type Envelope, type EnvelopeInput } from '../envelope/index.js';
import type { EventLog } from '../log/log.js';
import type { Db } from '../store/port.js';
import type { Update, Updates } from './executor.js';
import { changeTask } from './change.js';
import { isTerminal } from './states.js';
import { taskFromRow } from './store.js';
import { statusChange } from './subscriber.js';
import * as q from './sql.js';

/**
 * The ends the A2A layer records itself, with no Switchboard task event behind them: a skill that
 * could not be launched, a next turn whose session could not be resumed (`agent.a2a_task.failed`), a
 * cancel of a task whose agent has already exited (`agent.a2a_task.canceled`).
 */
export type OwnEnd =
  | { state: States.TASK_STATE_FAILED; reason: string }
  | { state: States.TASK_STATE_CANCELED; reason: string; by: string };

export interface RecordDeps {
  db: Db;
  log: Pick<EventLog, 'get'>;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  updates: Updates;
  /** The push deliveries of the change, in its transaction (absent without the delivery module). */
  pushed?: (tx: Db, row: q.A2ATaskRow, update: Update, event: Envelope) => Promise<void>;
  now: () => number;
}

/**
 * Ends an open A2A task as the subscriber ends one for a task event: the event, the new state and its
 * pushes (a terminal push, once) commit in one transaction, then the runs waiting in this process hear
 * of it. A task that has already ended is left as it is (false): its own terminal push is the one.
 * `push-own.test.ts` checks the push on both dialects.
 */
export async function recordEnd(d: RecordDeps, taskId: string, end: OwnEnd): Promise<boolean> {
  let update: Update | undefined;
  try {
    update = await d.db.tx(async (tx) => {
      const row = (await tx.query<q.A2ATaskRow>(q.selectTask(taskId)))[0];
      if (!row || isTerminal((await taskFromRow(row)).status?.state)) return undefined;
      const cause = row.cause_event_id ? (await d.log.get(row.cause_event_id, tx))?.envelope : undefined;
      const canceled = end.state === TaskState.TASK_STATE_CANCELED;
      const input: EnvelopeInput = {
        type: canceled ? 'agent.a2a_task.canceled' : 'agent.a2a_task.failed',
        redacted_summary: {
          a2a_task_id: row.id,
          context_id: row.context_id,
          reason: end.reason,
          previous_state: row.state,
          ...(canceled ? { by: end.by } : {}),
        },
        ...(row.sb_task_id ? { execution: { task_id: row.sb_task_id } } : {}),
      };
      const event = await d.emit(cause ? causedBy(cause, input) : input, tx);
      const made = await changeTask(
        tx,
        row,
        (r, task) => {
          const meta = { ...(task.metadata ?? {}) };
          delete meta.approval_id;
          delete meta.agent_exited;
          return statusChange(r, task, event, end.state, end.reason, meta);
        },
        d.now(),
      );
      // Another writer ended the task between the read and the write: its end (and push) is the one,
      // and this event is rolled back with the transaction.
      if (!made) throw new LostRace();
      await d.pushed?.(tx, made.row, made.change.update, event);
      return made.change.update;
    });
  } catch (err) {
    if (err instanceof LostRace) return false;
    throw err;
  }
  if (!update) return false;
  d.updates.emit(update);
  return true;
}

class LostRace extends Error {}
