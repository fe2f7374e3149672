import type { Task } from '@a2a-js/sdk';
import type { Db } from '../store/port.js';
import type { Update } from './executor.js';
import { isTerminal, stateName } from './states.js';
import { taskFromRow, taskJson } from './store.js';
import * as q from './sql.js';

/** A task's new body and what the change says (the payload of its pushes). */
export interface Change {
  task: Task;
  update: Update;
}

/**
 * Rounds of read, decide, compare-and-set before a change gives up (its transaction rolls back and the
 * relay hands the event out again). Each lost round means another writer committed a change to the
 * same task in between; two in a row is already rare.
 */
const MAX_ROUNDS = 5;

/**
 * The A2A task state machine: the one way a recorded task changes state (the task-event subscriber,
 * the ends `record.ts` records, the launcher's in-transaction hook). `decide` sees the row as read
 * and returns the change, or undefined for none; the write is a compare-and-set on that row's state
 * and body (`q.changeTask`), so a writer that lost a race reads the row again and decides again, and
 * an ended task never changes. The change comes back only to the writer that made it: that writer
 * alone enqueues its pushes, so a terminal state is pushed once, on both dialects
 * (`change.test.ts` races two writers on PostgreSQL).
 */
export async function changeTask(
  tx: Db,
  first: q.A2ATaskRow,
  decide: (row: q.A2ATaskRow, task: Task) => Change | undefined,
  now: number,
): Promise<{ row: q.A2ATaskRow; change: Change } | undefined> {
  let row: q.A2ATaskRow | undefined = first;
  for (let round = 0; row && round < MAX_ROUNDS; round++) {
    const current = await taskFromRow(row);
    if (isTerminal(current.status?.state)) return undefined;
    const change = decide(row, current);
    if (!change) return undefined;
    const to = {
      state: stateName(change.task.status?.state),
      task: await taskJson(change.task),
    };
    const won = await tx.query(q.changeTask(row.id, { state: row.state, task: row.task }, to, now));
    if (won.length > 0) return { row, change };
    row = (await tx.query<q.A2ATaskRow>(q.selectTask(first.id)))[0];
  }
  if (!row) return undefined;
  throw new Error(`A2A task ${first.id} changed under this writer ${MAX_ROUNDS} times in a row`);
}
