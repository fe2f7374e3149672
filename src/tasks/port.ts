import type { Envelope } from '../envelope/index.js';
import type { Principal } from '../kernel/module.js';
import { port } from '../kernel/port.js';
import type { Db } from '../store/port.js';

/** A2A-aligned task states (docs/ARCHITECTURE.md, task lifecycle). */
export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected';

export interface TaskView {
  id: string;
  state: TaskState;
  owner: string | null;
  runtime: string | null;
  session_id: string | null;
  correlation_id: string;
  title: string;
  created_at: string;
  updated_at: string;
  last_activity_at: string;
  steps: number;
  /** Loop guard carried by everything the task causes. */
  lineage: { hop_count: number; depth: number };
  /** The task was launched with untrusted input (a webhook payload): the gate's `session.untrusted`. */
  untrusted_input?: boolean;
}

/** What admission asks the tasks module to do for an admitted webhook (or a person, or a resume). */
export interface LaunchRequest {
  trigger_id: string;
  action:
    | {
        type: 'command';
        command: string[];
        cwd?: string;
        env?: Record<string, string>;
        max_runtime_seconds?: number;
        max_steps?: number;
        runtime?: string;
      }
    | { type: 'http'; url: string; headers?: Record<string, string>; body_template?: unknown }
    | { type: 'notify'; channels?: string[] };
  /** Trusted fields the action's arguments may be templated from. */
  trusted: Record<string, string>;
  /** Untrusted text (the webhook payload): passed to the agent as data (a file or stdin), never as arguments. */
  untrusted: { ref: string; digest: string; text: string };
  owner?: string;
  title: string;
  cause: Envelope;
  /**
   * The caller's idempotency marker (the launcher passes the admitted run's id): a second launch with
   * the same key returns the task the first one made and runs nothing. Recorded before anything runs.
   */
  launch_key?: string;
  /**
   * The launcher's own record of the run's start, written in the transaction that moves the task to
   * `working` at its spawn and appends `agent.task.started` (`event`), so what the launcher derives from
   * the start commits with it instead of a commit later (the A2A WORKING state and its push). Only the
   * start: every later change (reports, the exit, a cancel) reaches the launcher through the relay, in
   * the order the log has them. A hook that throws costs nothing but its write: the start is then
   * recorded without it (service.test.ts).
   */
  started?: (tx: Db, event: Envelope) => Promise<void>;
  /**
   * A command action's spawn mark is written in the transaction that records the task (`submitted`),
   * not in a commit of its own just before the spawn: one commit less before the process starts. A
   * crash between that commit and the spawn then reads as "may have run" (`findLaunch`'s `started`)
   * and the task is failed at restart, never run twice; a launcher that would rather relaunch a task
   * that never started (ingress, by `findLaunch`) leaves this unset.
   */
  spawn_mark_at_submit?: boolean;
}

/**
 * A launch recorded in the caller's transaction (`TaskService.prepareLaunch`): `task` is the task as it
 * was written (`submitted`; undefined when the request was refused before anything was written), and
 * `start` runs it once that transaction has committed, resolving as `launch` does (or rejecting with
 * what `launch` would have thrown).
 */
export interface PreparedLaunch {
  task: TaskView | undefined;
  start(): Promise<TaskView>;
}

/** What the console's task list filters on; the newest tasks come first. */
export interface TaskListFilter {
  state?: TaskState;
  owner?: string;
  runtime?: string;
  limit: number;
}

export interface TaskService {
  launch(req: LaunchRequest): Promise<TaskView>;
  get(id: string): Promise<TaskView | undefined>;
  /** Records activity from a hook or tool call: updates last activity and the step counter. */
  touch(taskId: string, opts?: { step?: boolean; session_id?: string; runtime?: string }): Promise<void>;
  resume(id: string, message: string, by: Principal): Promise<TaskView>;
  /**
   * What became of a launch with this key, for a launcher recovering from a crash: undefined when none
   * reached the task store (nothing ran), else its task and whether anything may have run (`started`:
   * the process was about to be spawned, or the POST sent). Optional: a service without it leaves the
   * launcher to its fallback (fail the run, never launch twice).
   */
  findLaunch?(key: string): Promise<{ task: TaskView; started: boolean } | undefined>;
  /**
   * `launch` of a command action in two steps: the task, its `agent.task.submitted` event (and its
   * spawn mark when asked) are written in `tx`, the caller's transaction, so they commit with what the
   * caller records (the A2A task), one commit less before the spawn; `start` then runs it, after that
   * commit and never before. A caller whose transaction rolls back has nothing to start; one that dies
   * between the commit and `start` leaves a `submitted` task that the next boot fails (`recover`), as a
   * crash between `launch`'s own commit and its spawn does. Optional: without it, `launch`.
   */
  prepareLaunch?(tx: Db, req: LaunchRequest): Promise<PreparedLaunch>;
  /** The newest tasks first. */
  list?(filter: TaskListFilter): Promise<TaskView[]>;
  /**
   * Stops a task that has not ended: `canceled` with its `agent.task.canceled` event first, then the
   * process is stopped (SIGTERM, SIGKILL after the grace). An ended task is a `conflict`.
   */
  cancel?(id: string, by: Principal): Promise<TaskView>;
}

/** Tasks (src/tasks/module.ts provides it). */
export const tasksPort = port<TaskService>('tasks');
