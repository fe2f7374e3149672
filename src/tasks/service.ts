import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  type Envelope,
  type EnvelopeInput,
  type EventType,
  isId,
  newId,
  sha256Hex,
} from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import type { KeyRing } from '../server/auth.js';
import type { Principal } from '../server/module.js';
import type { LaunchRequest, TaskService, TaskState, TaskView } from '../server/ports.js';
import { type Db, one } from '../store/port.js';
import { type TasksConfig, resumeTemplate } from './config.js';
import { taskEvent } from './events.js';
import { type Poster, classifyHttpStatus, httpBody } from './http.js';
import { type AgentProcess, type Exit, pidAlive, startProcess } from './process.js';
import * as q from './sql.js';
import { renderArgv, trustedVars, untrustedHeader } from './template.js';

export interface RunnerDeps {
  db: Db;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  keys: KeyRing;
  now: () => number;
  logger: Logger;
  config: TasksConfig;
  /** Per-task directories (input file, logs) are created under it. */
  workDir: string;
  /** What SWITCHBOARD_URL tells a launched agent. */
  publicUrl: string;
  poster: Poster;
  /** Identifies this gateway process; a task row with another boot id was started by an earlier one. */
  bootId: string;
  /** Where the passthrough variables are read from (default: process.env at spawn time). */
  env?: NodeJS.ProcessEnv;
}

/** The stored form of a task's action: templates and names only, never env values (they may be secrets). */
export type StoredAction =
  | { type: 'command'; command: string[]; cwd: string | null; env_keys: string[] }
  | { type: 'http'; url: string; header_names: string[] }
  | { type: 'notify'; channels: string[] };

/** A session id becomes one argv element of a resume command: it must look like an id, not like a flag. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const RUNTIME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const RESUMABLE: readonly TaskState[] = ['completed', 'failed', 'input-required'];
const RUNNING: readonly TaskState[] = ['working', 'input-required'];

interface Live {
  process: AgentProcess;
  secret: string;
  timer: NodeJS.Timeout;
  done: Promise<void>;
}

/**
 * The task service: launches actions, keeps the task row in step with the agent process, and applies
 * the limits. Every state change goes through `move` (one conditional UPDATE plus its event, in one
 * transaction).
 */
export class TaskRunner implements TaskService {
  private readonly live = new Map<string, Live>();
  private readonly host = hostname();

  constructor(private readonly deps: RunnerDeps) {}

  async launch(req: LaunchRequest): Promise<TaskView> {
    const a = req.action;
    if (a.type === 'command') {
      const vars = trustedVars(req.trusted);
      const rendered = renderArgv(a.command, vars);
      if (!rendered.ok)
        throw new AppError('validation_failed', `trigger ${req.trigger_id}: ${rendered.error}`);
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(a.env ?? {})) {
        const r = renderArgv([v], vars);
        if (!r.ok) throw new AppError('validation_failed', `trigger ${req.trigger_id}: env ${k}: ${r.error}`);
        env[k] = r.argv[0]!;
      }
      const stored: StoredAction = {
        type: 'command',
        command: a.command,
        cwd: a.cwd ?? null,
        env_keys: Object.keys(env),
      };
      const row = await this.submit(req, stored, {
        runtime: a.runtime ?? null,
        max_steps: a.max_steps ?? this.deps.config.max_steps,
        max_runtime_ms: Math.round((a.max_runtime_seconds ?? this.deps.config.max_runtime_seconds) * 1000),
      });
      const dir = this.taskDir(row.id);
      const input = join(dir, 'input.txt');
      writeFileSync(input, untrustedHeader(req.untrusted.ref, req.untrusted.digest) + req.untrusted.text, {
        mode: 0o600,
      });
      return this.run(row, rendered.argv, input, a.cwd ?? dir, env, ['submitted'], 'agent.task.started', {});
    }
    if (a.type === 'http') {
      const id = newId('task', this.deps.now());
      const body = httpBody(req, a.body_template, { id, switchboard_url: this.deps.publicUrl });
      if (!body.ok) throw new AppError('validation_failed', `trigger ${req.trigger_id}: ${body.error}`);
      const stored: StoredAction = { type: 'http', url: a.url, header_names: Object.keys(a.headers ?? {}) };
      const row = await this.submit(req, stored, {}, id);
      const headers = {
        ...a.headers,
        'content-type': 'application/json',
        'idempotency-key': req.cause.event_id,
      };
      let status: number;
      try {
        status = (await this.deps.poster({ url: a.url, headers, body: body.body })).status;
      } catch (err) {
        const reason = `the POST to the endpoint failed: ${(err as Error).message}`;
        return toView(await this.fail(row.id, ['submitted'], reason));
      }
      const outcome = classifyHttpStatus(status);
      if (outcome.kind === 'failed') return toView(await this.fail(row.id, ['submitted'], outcome.reason));
      const working = await this.move(
        row.id,
        ['submitted'],
        'working',
        'agent.task.started',
        { boot_id: null },
        { http_status: status },
      );
      if (outcome.kind === 'working' || !working) return toView(working ?? (await this.row(row.id)));
      return toView(
        (await this.move(
          row.id,
          ['working'],
          'completed',
          'agent.task.completed',
          {},
          { http_status: status },
        )) ?? working,
      );
    }
    const stored: StoredAction = { type: 'notify', channels: a.channels ?? [] };
    const row = await this.submit(req, stored, {});
    // A notify task is only an event for the mouth: it is done as soon as it is recorded.
    const done = await this.move(
      row.id,
      ['submitted'],
      'completed',
      'agent.task.completed',
      { boot_id: null },
      { channels: stored.channels },
    );
    return toView(done ?? row);
  }

  async get(id: string): Promise<TaskView | undefined> {
    const row = await this.row(id);
    return row ? toView(row) : undefined;
  }

  async row(id: string): Promise<q.TaskRow | undefined> {
    if (!isId('task', id)) return undefined;
    return one<q.TaskRow>(this.deps.db, q.selectTask(id));
  }

  /** Unknown tasks are ignored: a hook from a task this store does not know must not fail the agent's tool call. */
  async touch(
    taskId: string,
    opts: { step?: boolean; session_id?: string; runtime?: string } = {},
  ): Promise<void> {
    if (!isId('task', taskId)) return;
    const sessionId =
      opts.session_id !== undefined && SESSION_ID.test(opts.session_id) ? opts.session_id : null;
    if (opts.session_id !== undefined && sessionId === null)
      this.deps.logger.warn({ taskId }, 'ignored a session id that does not look like one');
    const runtime = opts.runtime !== undefined && RUNTIME.test(opts.runtime) ? opts.runtime : null;
    const row = await one<q.TaskRow>(
      this.deps.db,
      q.touchTask(taskId, this.deps.now(), { step: opts.step === true, session_id: sessionId, runtime }),
    );
    if (!row || !opts.step || row.max_steps === null) return;
    if (Number(row.steps) > Number(row.max_steps) && RUNNING.includes(row.state)) {
      await this.expire(taskId, `max steps of ${row.max_steps} exceeded`);
    }
  }

  async resume(id: string, message: string, by: Principal): Promise<TaskView> {
    const row = await this.row(id);
    if (!row) throw new AppError('not_found', `no task ${id}`);
    const action = JSON.parse(row.action) as StoredAction;
    if (action.type !== 'command')
      throw new AppError(
        'conflict',
        `task ${id} is an ${action.type} task; only command tasks can be resumed`,
      );
    if (this.live.has(id))
      throw new AppError('conflict', `task ${id} is still running; resume it after it stops`);
    if (!RESUMABLE.includes(row.state))
      throw new AppError(
        'conflict',
        `task ${id} is ${row.state}; only a completed, failed or input-required task can be resumed`,
      );
    if (!row.session_id)
      throw new AppError(
        'conflict',
        `task ${id} has no session id yet (it is learned from the agent's hooks), so there is no session to resume`,
      );
    if (!row.runtime)
      throw new AppError('conflict', `task ${id} has no runtime, so there is no resume command for it`);
    const template = resumeTemplate(this.deps.config, row.runtime);
    if (!template)
      throw new AppError(
        'conflict',
        `there is no resume command for runtime ${row.runtime}; set tasks.resume.${row.runtime}`,
      );
    const dir = this.taskDir(id);
    const file = join(dir, `resume-${this.deps.now()}-${randomBytes(3).toString('hex')}.txt`);
    const rendered = renderArgv(template, { session_id: row.session_id, task_id: id, message_file: file });
    if (!rendered.ok)
      throw new AppError('conflict', `tasks.resume.${row.runtime} is misconfigured: ${rendered.error}`);
    writeFileSync(
      file,
      `# switchboard: message from ${by.name} (${by.role}) to continue this task.\n${message}`,
      { mode: 0o600 },
    );
    return this.run(
      row,
      rendered.argv,
      file,
      action.cwd ?? dir,
      {},
      RESUMABLE,
      'agent.task.resumed',
      { by: by.name, role: by.role },
      true,
    );
  }

  /** Approvals drive `input-required`: a pending one parks the task, a decision returns it to `working`. */
  async onApproval(event: Envelope, db: Db = this.deps.db): Promise<void> {
    const id = event.execution.task_id;
    if (!id || !isId('task', id)) return;
    const approval = event.redacted_summary.approval_id ?? null;
    if (event.type === 'agent.approval.requested') {
      await this.move(
        id,
        ['working'],
        'input-required',
        'agent.task.input_required',
        {},
        { approval_id: approval },
        db,
      );
    } else {
      const set = { last_activity_at: this.deps.now(), stalled_at: null };
      await this.move(
        id,
        ['input-required'],
        'working',
        'agent.task.resumed',
        set,
        { via: 'approval', outcome: event.type, approval_id: approval },
        db,
      );
    }
  }

  /**
   * After a restart: a task whose process an earlier gateway on this host started cannot be watched any
   * more (no exit status, no runtime limit), so it is failed, never relaunched blindly. Tasks of another
   * host's gateway are left to it (docs/tasks.md).
   */
  async recover(): Promise<number> {
    const rows = await this.deps.db.query<q.TaskRow>(q.selectOrphans(this.deps.bootId));
    let failed = 0;
    for (const row of rows) {
      if (row.host !== this.host) continue;
      const owner = row.gateway_pid === null ? null : Number(row.gateway_pid);
      if (owner !== null && owner !== process.pid && pidAlive(owner)) continue;
      const agentAlive = row.pid === null ? false : pidAlive(Number(row.pid));
      const moved = await this.move(
        row.id,
        q.LIVE,
        'failed',
        'agent.task.failed',
        { error: 'gateway restarted' },
        {
          reason: 'gateway restarted',
          pid: row.pid,
          agent_pid_alive: agentAlive,
        },
      );
      if (moved) failed += 1;
    }
    return failed;
  }

  /** Fails every task with a process here and stops the processes; waits at most the kill grace. */
  async stop(): Promise<void> {
    const waits = [...this.live.keys()].map(async (id) => {
      const live = this.live.get(id);
      await this.expire(id, 'gateway stopped');
      await live?.done;
    });
    await Promise.all(waits);
  }

  private async submit(
    req: LaunchRequest,
    action: StoredAction,
    limits: { runtime?: string | null; max_steps?: number; max_runtime_ms?: number },
    id: string = newId('task', this.deps.now()),
  ): Promise<q.TaskRow> {
    const cause = req.cause;
    return this.deps.db.tx(async (tx) => {
      const row = await one<q.TaskRow>(
        tx,
        q.insertTask(
          {
            id,
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
          },
          this.deps.now(),
        ),
      );
      await this.deps.emit(
        taskEvent(
          row!,
          'agent.task.submitted',
          action.type === 'notify' ? { channels: action.channels } : {},
        ),
        tx,
      );
      return row!;
    });
  }

  private async run(
    row: q.TaskRow,
    argv: string[],
    inputFile: string,
    cwd: string,
    extraEnv: Record<string, string>,
    from: readonly TaskState[],
    event: EventType,
    summary: Record<string, unknown>,
    resetSteps = false,
  ): Promise<TaskView> {
    const secret = `sbt_${randomBytes(32).toString('base64url')}`;
    this.deps.keys.add(secret, { name: `task:${row.id}`, role: 'agent', task_id: row.id });
    const env = this.agentEnv(row.id, secret, inputFile, extraEnv);
    const started = await startProcess({
      argv,
      cwd,
      env,
      stdinFile: inputFile,
      logDir: this.taskDir(row.id),
    });
    if (!started.ok) {
      revokeKey(this.deps.keys, secret);
      return toView(await this.fail(row.id, from, started.error));
    }
    const p = started.process;
    const set: q.TransitionSet = {
      pid: p.pid,
      boot_id: this.deps.bootId,
      host: this.host,
      gateway_pid: process.pid,
      key_digest: sha256Hex(secret),
      error: null,
      exit_code: null,
      stalled_at: null,
      last_activity_at: this.deps.now(),
      ...(resetSteps ? { steps: 0 } : {}),
    };
    const moved = await this.move(row.id, from, 'working', event, set, { ...summary, pid: p.pid });
    if (!moved) {
      p.terminate(0);
      revokeKey(this.deps.keys, secret);
      throw new AppError(
        'conflict',
        `task ${row.id} changed state while its process started; the process was stopped`,
      );
    }
    const maxMs = Number(moved.max_runtime_ms ?? this.deps.config.max_runtime_seconds * 1000);
    const timer = setTimeout(() => {
      void this.expire(row.id, `max runtime of ${maxMs / 1000}s exceeded`).catch((err) =>
        this.deps.logger.error({ err, taskId: row.id }, 'could not fail a task at its max runtime'),
      );
    }, maxMs);
    timer.unref();
    const live: Live = { process: p, secret, timer, done: Promise.resolve() };
    live.done = p.exited
      .then((exit) => this.finish(row.id, live, exit))
      .catch((err) => this.deps.logger.error({ err, taskId: row.id }, 'could not record a task exit'));
    this.live.set(row.id, live);
    return toView(moved);
  }

  private async finish(id: string, live: Live, exit: Exit): Promise<void> {
    clearTimeout(live.timer);
    revokeKey(this.deps.keys, live.secret);
    if (this.live.get(id) === live) this.live.delete(id);
    const code = exit.kind === 'exited' ? exit.code : null;
    const moved =
      exit.kind === 'exited' && exit.code === 0
        ? await this.move(
            id,
            RUNNING,
            'completed',
            'agent.task.completed',
            { exit_code: 0 },
            { exit_code: 0 },
          )
        : await this.fail(id, RUNNING, exitReason(exit), code);
    if (!moved) await this.deps.db.query(q.recordExit(id, code));
  }

  /** A limit was hit: the task fails first (so the exit that follows changes nothing), then the process stops. */
  private async expire(id: string, reason: string): Promise<void> {
    await this.fail(id, RUNNING, reason);
    this.live.get(id)?.process.terminate(this.deps.config.kill_grace_seconds * 1000);
  }

  private async fail(id: string, from: readonly TaskState[], reason: string, exitCode: number | null = null) {
    const set: q.TransitionSet =
      exitCode === null ? { error: reason } : { error: reason, exit_code: exitCode };
    return this.move(id, from, 'failed', 'agent.task.failed', set, { reason, exit_code: exitCode });
  }

  private async move(
    id: string,
    from: readonly TaskState[],
    to: TaskState,
    type: EventType,
    set: q.TransitionSet,
    summary: Record<string, unknown>,
    db: Db = this.deps.db,
  ): Promise<q.TaskRow | undefined> {
    return db.tx(async (tx) => {
      const row = await one<q.TaskRow>(tx, q.transition(id, from, to, this.deps.now(), set));
      if (row) await this.deps.emit(taskEvent(row, type, summary), tx);
      return row;
    });
  }

  private agentEnv(
    id: string,
    secret: string,
    inputFile: string,
    extra: Record<string, string>,
  ): Record<string, string> {
    const source = this.deps.env ?? process.env;
    const env: Record<string, string> = {};
    for (const name of this.deps.config.env_passthrough) {
      const v = source[name];
      if (v !== undefined) env[name] = v;
    }
    return {
      ...env,
      ...extra,
      SWITCHBOARD_URL: this.deps.publicUrl,
      SWITCHBOARD_TASK_ID: id,
      SWITCHBOARD_KEY: secret,
      SWITCHBOARD_INPUT_FILE: inputFile,
    };
  }

  private taskDir(id: string): string {
    const dir = join(this.deps.workDir, id);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** For tests and `stop`: the processes this gateway watches. */
  get running(): number {
    return this.live.size;
  }
}

export function toView(row: q.TaskRow | undefined): TaskView {
  if (!row) throw new AppError('internal');
  return q.toView(row);
}

function exitReason(exit: Exit): string {
  if (exit.kind === 'spawn_failed') return `the agent process failed: ${exit.error}`;
  if (exit.signal) return `the agent process was killed by ${exit.signal}`;
  return `the agent process exited with code ${exit.code}`;
}

/**
 * A task key dies with the task. KeyRing has no removal yet (reported to the lead); until it does,
 * the key stays valid for this process's lifetime but `GET /v1/tasks` shows the task as ended.
 */
function revokeKey(keys: KeyRing, secret: string): void {
  const ring = keys as KeyRing & { remove?: (secret: string) => void };
  ring.remove?.(secret);
}
