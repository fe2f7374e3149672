import { hostname } from 'node:os';
import { type Envelope, type EnvelopeInput, type EventType, isId, newId } from '../envelope/index.js';
import type { LaunchRequest, TaskState } from '../tasks/port.js';
import { type Db, one } from '../store/port.js';
import { taskEvent } from './events.js';
import * as q from './sql.js';

/** The stored form of a task's action: templates and names only, never env or header values (they may be secrets). */
export type StoredAction =
  | { type: 'command'; command: string[]; cwd: string | null; env_keys: string[] }
  | { type: 'http'; url: string; header_names: string[] }
  | { type: 'notify'; channels: string[] };

export interface Limits {
  runtime?: string | null;
  max_steps?: number;
  max_runtime_ms?: number;
}

/** A launch whose key already has a task: nothing new was recorded or run. */
export class AlreadyLaunched extends Error {
  constructor(readonly row: q.TaskRow) {
    super(`a task was already launched with this key: ${row.id}`);
    this.name = 'AlreadyLaunched';
  }
}

/**
 * The task rows and their events. Every state change goes through `move`: one conditional UPDATE and
 * its event in one transaction, so a state and the event that announces it never disagree.
 */
export class TaskStore {
  readonly host = hostname();

  constructor(
    private readonly deps: {
      db: Db;
      emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
      now: () => number;
      /** Stamped on each new row, so a later boot knows which tasks an earlier process started. */
      bootId: string;
    },
  ) {}

  get db(): Db {
    return this.deps.db;
  }

  async row(id: string): Promise<q.TaskRow | undefined> {
    if (!isId('task', id)) return undefined;
    return one<q.TaskRow>(this.deps.db, q.selectTask(id));
  }

  /**
   * Records a new task as `submitted` with its `agent.task.submitted` event, and its spawn mark with
   * them when the launcher asks (`LaunchRequest.spawn_mark_at_submit`).
   */
  async submit(
    req: LaunchRequest,
    action: StoredAction,
    limits: Limits,
    id?: string,
    /** The caller's transaction to write in (`TaskService.prepareLaunch`); else one of its own. */
    db: Db = this.deps.db,
  ): Promise<q.TaskRow> {
    const cause = req.cause;
    return db.tx(async (tx) => {
      const row = await one<q.TaskRow>(
        tx,
        q.insertTask(
          {
            id: id ?? newId('task', this.deps.now()),
            owner: req.owner ?? null,
            runtime: limits.runtime ?? null,
            tenant_id: cause.tenant_id,
            environment: cause.environment,
            correlation_id: cause.correlation_id,
            cause_event_id: cause.event_id,
            // A task is one more hop and one automation level below the event that launched it.
            hop_count: cause.lineage.hop_count + 1,
            depth: cause.lineage.depth + 1,
            title: req.title,
            trigger_id: req.trigger_id,
            action: JSON.stringify(action),
            untrusted_ref: req.untrusted.ref,
            untrusted_digest: req.untrusted.digest,
            max_steps: limits.max_steps ?? null,
            max_runtime_ms: limits.max_runtime_ms ?? null,
            boot_id: this.deps.bootId,
            host: this.host,
            gateway_pid: process.pid,
            launch_key: req.launch_key ?? null,
            // The spawn's write-ahead mark, with the task when the launcher asks (one statement less).
            spawn_at: req.spawn_mark_at_submit && action.type === 'command' ? this.deps.now() : null,
          },
          this.deps.now(),
        ),
      );
      if (!row) {
        const first = req.launch_key
          ? await one<q.TaskRow>(tx, q.selectByLaunchKey(req.launch_key))
          : undefined;
        if (first) throw new AlreadyLaunched(first);
        throw new Error('INSERT … RETURNING gave no row');
      }
      const summary = action.type === 'notify' ? { channels: action.channels } : {};
      await this.deps.emit(taskEvent(row, 'agent.task.submitted', summary), tx);
      return row;
    });
  }

  async move(
    id: string,
    from: readonly TaskState[],
    to: TaskState,
    type: EventType,
    set: q.TransitionSet,
    summary: Record<string, unknown>,
    db: Db = this.deps.db,
    /** Written in the transaction of the change, after its event (`LaunchRequest.started`). */
    also?: (tx: Db, event: Envelope) => Promise<void>,
  ): Promise<q.TaskRow | undefined> {
    return db.tx(async (tx) => {
      const row = await one<q.TaskRow>(tx, q.transition(id, from, to, this.deps.now(), set));
      if (!row) return row;
      const event = await this.deps.emit(taskEvent(row, type, summary), tx);
      await also?.(tx, event);
      return row;
    });
  }

  async fail(
    id: string,
    from: readonly TaskState[],
    reason: string,
    exitCode: number | null = null,
    /** More facts for the event's summary (an `http` action's `blocked_reason`). */
    facts: Record<string, unknown> = {},
  ): Promise<q.TaskRow | undefined> {
    const set: q.TransitionSet =
      exitCode === null ? { error: reason } : { error: reason, exit_code: exitCode };
    return this.move(id, from, 'failed', 'agent.task.failed', set, { reason, exit_code: exitCode, ...facts });
  }

  async touch(
    id: string,
    opts: { step: boolean; session_id: string | null; runtime: string | null },
  ): Promise<q.TaskRow | undefined> {
    return one<q.TaskRow>(this.deps.db, q.touchTask(id, this.deps.now(), opts));
  }

  async byLaunchKey(key: string): Promise<q.TaskRow | undefined> {
    return one<q.TaskRow>(this.deps.db, q.selectByLaunchKey(key));
  }

  /** Recorded before the process is spawned or the POST sent: `spawn_at` null means nothing ran. */
  async markSpawn(id: string): Promise<void> {
    await this.deps.db.query(q.markSpawn(id, this.deps.now()));
  }

  async recordExit(id: string, code: number | null): Promise<void> {
    await this.deps.db.query(q.recordExit(id, code));
  }

  async list(f: Parameters<typeof q.listTasks>[0]): Promise<q.TaskRow[]> {
    return this.deps.db.query<q.TaskRow>(q.listTasks(f));
  }

  async orphans(): Promise<q.TaskRow[]> {
    return this.deps.db.query<q.TaskRow>(q.selectOrphans(this.deps.bootId));
  }
}
