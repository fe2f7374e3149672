import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
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
import type { KeyRing } from '../kernel/auth.js';
import type { Principal } from '../kernel/module.js';
import type {
  LaunchRequest,
  PreparedLaunch,
  TaskListFilter,
  TaskService,
  TaskState,
  TaskView,
} from '../tasks/port.js';
import type { Db } from '../store/port.js';
import { launchHttp, launchNotify } from './actions.js';
import type { TasksConfig } from './config.js';
import type { Poster } from './http.js';
import type { EffectsPort } from '../effects/port.js';
import { type AgentProcess, type Exit, pidAlive, startProcess } from './process.js';
import { planResume, RESUMABLE, resumeHeader } from './resume.js';
import * as q from './sql.js';
import { AlreadyLaunched, type StoredAction, TaskStore } from './store.js';
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
  /**
   * What SWITCHBOARD_URL tells a launched agent, read at each launch: the address is known only once
   * the server listens (port 0), and `server.public_url` may be reloaded.
   */
  publicUrl: () => string;
  poster: Poster;
  /** Identifies this gateway process; a task row with another boot id was started by an earlier one. */
  bootId: string;
  /** Where the passthrough variables are read from (default: process.env at spawn time). */
  env?: NodeJS.ProcessEnv;
  /** The effect ledger (src/effects), when it runs: an `http` action's POST is an effect with a receipt. */
  effects?: () => EffectsPort | undefined;
}

/** A session id becomes one argv element of a resume command: it must look like an id, not like a flag. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const RUNTIME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const RUNNING: readonly TaskState[] = ['working', 'input-required'];

interface Live {
  process: AgentProcess;
  secret: string;
  timer: NodeJS.Timeout;
  done: Promise<void>;
}

type CommandAction = Extract<LaunchRequest['action'], { type: 'command' }>;

/** A command launch as rendered before anything is written: its argv, env and stored form. */
interface CommandPlan {
  argv: string[];
  env: Record<string, string>;
  stored: StoredAction;
  limits: { runtime: string | null; max_steps: number; max_runtime_ms: number };
}

interface Run {
  argv: string[];
  inputFile: string;
  cwd: string;
  env: Record<string, string>;
  from: readonly TaskState[];
  event: EventType;
  summary: Record<string, unknown>;
  resetSteps: boolean;
  /** The launcher's record of the start, in its transaction (`LaunchRequest.started`). */
  started?: LaunchRequest['started'];
  /** The spawn mark was written with the task (`LaunchRequest.spawn_mark_at_submit`). */
  spawnMarked?: boolean;
}

/**
 * The task service: launches actions, keeps the task row in step with the agent process and its hooks,
 * and applies the limits. State changes go through `TaskStore.move` (one conditional UPDATE and its event).
 */
export class TaskRunner implements TaskService {
  private readonly live = new Map<string, Live>();
  private readonly store: TaskStore;

  constructor(private readonly deps: RunnerDeps) {
    this.store = new TaskStore(deps);
  }

  /**
   * Launches an action once per `launch_key`: a key that already has a task gets that task back, and
   * nothing runs again (a launcher retrying after a crash, two replicas racing). The unique index on
   * the key decides a race; the loser's insert records nothing.
   */
  async launch(req: LaunchRequest): Promise<TaskView> {
    if (req.launch_key) {
      const first = await this.store.byLaunchKey(req.launch_key);
      if (first) return q.toView(first);
    }
    try {
      return await this.launchNew(req);
    } catch (err) {
      if (err instanceof AlreadyLaunched) return q.toView(err.row);
      throw err;
    }
  }

  async findLaunch(key: string): Promise<{ task: TaskView; started: boolean } | undefined> {
    const row = await this.store.byLaunchKey(key);
    return row ? { task: q.toView(row), started: row.spawn_at !== null } : undefined;
  }

  private async launchNew(req: LaunchRequest): Promise<TaskView> {
    const a = req.action;
    if (a.type === 'http') {
      const id = newId('task', this.deps.now());
      return q.toView(
        await launchHttp(
          this.store,
          this.deps.poster,
          this.deps.publicUrl(),
          req,
          a,
          id,
          this.deps.effects?.(),
        ),
      );
    }
    if (a.type === 'notify') return q.toView(await launchNotify(this.store, req, a));
    const plan = this.commandPlan(req, a);
    const row = await this.store.submit(req, plan.stored, plan.limits);
    return this.startCommand(row, req, a, plan);
  }

  async prepareLaunch(tx: Db, req: LaunchRequest): Promise<PreparedLaunch> {
    const a = req.action;
    // An http or notify action acts as it is recorded: nothing to split, it all runs after the commit.
    if (a.type !== 'command') return { task: undefined, start: () => this.launch(req) };
    let plan: CommandPlan;
    try {
      plan = this.commandPlan(req, a);
    } catch (err) {
      // Refused before anything is written: the caller hears it from `start`, as from `launch`.
      return { task: undefined, start: () => Promise.reject(err) };
    }
    let row: q.TaskRow;
    try {
      row = await this.store.submit(req, plan.stored, plan.limits, undefined, tx);
    } catch (err) {
      if (!(err instanceof AlreadyLaunched)) throw err;
      const first = q.toView(err.row);
      return { task: first, start: async () => first };
    }
    return { task: q.toView(row), start: () => this.startCommand(row, req, a, plan) };
  }

  /** The argv and env rendered from the trusted fields; a template that does not render refuses the launch. */
  private commandPlan(req: LaunchRequest, a: CommandAction): CommandPlan {
    const vars = trustedVars(req.trusted);
    const rendered = renderArgv(a.command, vars);
    if (!rendered.ok) throw new AppError('validation_failed', `trigger ${req.trigger_id}: ${rendered.error}`);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(a.env ?? {})) {
      const r = renderArgv([v], vars);
      if (!r.ok) throw new AppError('validation_failed', `trigger ${req.trigger_id}: env ${k}: ${r.error}`);
      env[k] = r.argv[0]!;
    }
    return {
      argv: rendered.argv,
      env,
      stored: { type: 'command', command: a.command, cwd: a.cwd ?? null, env_keys: Object.keys(env) },
      limits: {
        runtime: a.runtime ?? null,
        max_steps: a.max_steps ?? this.deps.config.max_steps,
        max_runtime_ms: Math.round((a.max_runtime_seconds ?? this.deps.config.max_runtime_seconds) * 1000),
      },
    };
  }

  /** A recorded command task's input file, then its process (`run`). */
  private async startCommand(
    row: q.TaskRow,
    req: LaunchRequest,
    a: CommandAction,
    plan: CommandPlan,
  ): Promise<TaskView> {
    let dir: string;
    let inputFile: string;
    try {
      dir = this.taskDir(row.id);
      inputFile = join(dir, 'input.txt');
      const header = untrustedHeader(req.untrusted.ref, req.untrusted.digest);
      writeFileSync(inputFile, header + req.untrusted.text, { mode: 0o600 });
    } catch (err) {
      const reason = `could not write the task's input file: ${(err as Error).message}`;
      return q.toView((await this.store.fail(row.id, ['submitted'], reason)) ?? row);
    }
    return this.run(row, {
      argv: plan.argv,
      inputFile,
      cwd: a.cwd ?? dir,
      env: plan.env,
      from: ['submitted'],
      event: 'agent.task.started',
      summary: {},
      resetSteps: false,
      ...(req.started ? { started: req.started } : {}),
      ...(row.spawn_at !== null ? { spawnMarked: true } : {}),
    });
  }

  async get(id: string): Promise<TaskView | undefined> {
    const row = await this.store.row(id);
    return row ? q.toView(row) : undefined;
  }

  row(id: string): Promise<q.TaskRow | undefined> {
    return this.store.row(id);
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
    const row = await this.store.touch(taskId, { step: opts.step === true, session_id: sessionId, runtime });
    if (!row || !opts.step || row.max_steps === null) return;
    if (Number(row.steps) > Number(row.max_steps) && RUNNING.includes(row.state)) {
      await this.expire(taskId, `max steps of ${row.max_steps} exceeded`);
    }
  }

  async resume(id: string, message: string, by: Principal): Promise<TaskView> {
    const row = await this.store.row(id);
    if (!row) throw new AppError('not_found', `no task ${id}`);
    const dir = this.taskDir(id);
    const file = join(dir, `resume-${this.deps.now()}-${randomBytes(3).toString('hex')}.txt`);
    const plan = planResume(row, this.deps.config, this.live.has(id), file);
    if (!plan.ok) throw new AppError('conflict', plan.error);
    writeFileSync(file, resumeHeader(by) + message, { mode: 0o600 });
    return this.run(row, {
      argv: plan.argv,
      inputFile: file,
      cwd: plan.cwd ?? dir,
      env: {},
      from: RESUMABLE,
      event: 'agent.task.resumed',
      summary: { by: by.name, role: by.role },
      resetSteps: true,
    });
  }

  async list(filter: TaskListFilter): Promise<TaskView[]> {
    return (await this.store.list(filter)).map(q.toView);
  }

  /**
   * The state changes first (one conditional UPDATE with its event), so the exit that follows the
   * signal finds the task ended and only records its exit code, as a limit's `expire` does.
   */
  async cancel(id: string, by: Principal): Promise<TaskView> {
    const row = await this.store.row(id);
    if (!row) throw new AppError('not_found', `no task ${id}`);
    const summary = { by: by.name, role: by.role, previous_state: row.state };
    const moved = await this.store.move(id, q.LIVE, 'canceled', 'agent.task.canceled', {}, summary);
    if (!moved) {
      const now = await this.store.row(id);
      throw new AppError(
        'conflict',
        `task ${id} is already ${now?.state ?? row.state}; only a running task can be canceled`,
      );
    }
    this.live.get(id)?.process.terminate(this.deps.config.kill_grace_seconds * 1000);
    return q.toView(moved);
  }

  /** Approvals drive `input-required`: a pending one parks the task, a decision returns it to `working`. */
  async onApproval(event: Envelope, db: Db = this.deps.db): Promise<void> {
    const id = event.execution.task_id;
    if (!id || !isId('task', id)) return;
    const approval = event.redacted_summary.approval_id ?? null;
    if (event.type === 'agent.approval.requested') {
      const summary = { approval_id: approval };
      await this.store.move(id, ['working'], 'input-required', 'agent.task.input_required', {}, summary, db);
      return;
    }
    const set = { last_activity_at: this.deps.now(), stalled_at: null };
    const summary = { via: 'approval', outcome: event.type, approval_id: approval };
    await this.store.move(id, ['input-required'], 'working', 'agent.task.resumed', set, summary, db);
  }

  /**
   * After a restart: a task whose process an earlier gateway on this host started cannot be watched any
   * more (no exit status, no runtime limit), so it is failed, never relaunched blindly. Tasks of another
   * host's gateway are left to it (docs/tasks.md), or to the leader's sweep once it died (`recoverDead`).
   */
  async recover(): Promise<number> {
    let failed = 0;
    for (const row of await this.store.orphans()) {
      if (row.host !== this.store.host) continue;
      const owner = row.gateway_pid === null ? null : Number(row.gateway_pid);
      if (owner !== null && owner !== process.pid && pidAlive(owner)) continue;
      if (await this.failOrphan(row, 'gateway restarted', {})) failed += 1;
    }
    return failed;
  }

  /**
   * The cluster leader's sweep: the tasks whose gateway is one of `dead` (replicas past the cluster's
   * dead-replica threshold) are failed as `recover` fails them at start, never relaunched; `fence` runs
   * in each transaction, so a replica that lost the lease meanwhile changes nothing. A replica that
   * died and never came back would otherwise leave its tasks, and the runs that wait on them, live
   * for ever. Test: test/e2e/replicas.test.ts.
   */
  async recoverDead(
    dead: readonly { id: string; host: string; pid: number }[],
    fence: (tx: Db) => Promise<void>,
  ): Promise<number> {
    if (dead.length === 0) return 0;
    let failed = 0;
    for (const row of await this.store.orphans()) {
      const owner = row.gateway_pid === null ? null : Number(row.gateway_pid);
      const replica = dead.find((r) => r.host === row.host && r.pid === owner);
      if (!replica || owner === process.pid) continue;
      const moved = await this.deps.db.tx(async (tx) => {
        await fence(tx);
        return this.failOrphan(row, 'gateway replica died', { replica_id: replica.id }, tx);
      });
      if (moved) failed += 1;
    }
    return failed;
  }

  private async failOrphan(
    row: q.TaskRow,
    reason: string,
    extra: Record<string, unknown>,
    db: Db = this.deps.db,
  ): Promise<boolean> {
    const here = row.host === this.store.host;
    const summary = {
      reason,
      ...extra,
      pid: row.pid,
      // Only this host can look at the agent's pid; another host's stays unknown (null).
      agent_pid_alive: row.pid === null ? false : here ? pidAlive(Number(row.pid)) : null,
    };
    return (
      (await this.store.move(
        row.id,
        q.LIVE,
        'failed',
        'agent.task.failed',
        { error: reason },
        summary,
        db,
      )) !== undefined
    );
  }

  /** Fails every task with a process here and stops the processes (SIGTERM, SIGKILL after the grace). */
  async stop(): Promise<void> {
    const waits = [...this.live.entries()].map(async ([id, live]) => {
      await this.expire(id, 'gateway stopped');
      await live.done;
    });
    await Promise.all(waits);
  }

  /** The processes this gateway watches. */
  get running(): number {
    return this.live.size;
  }

  private async run(row: q.TaskRow, r: Run): Promise<TaskView> {
    const secret = `sbt_${randomBytes(32).toString('base64url')}`;
    this.deps.keys.add(secret, { name: `task:${row.id}`, role: 'agent', task_id: row.id });
    const env = this.agentEnv(row.id, secret, r.inputFile, r.env, Number(row.depth), Number(row.hop_count));
    const spec = { argv: r.argv, cwd: r.cwd, env, stdinFile: r.inputFile, logDir: this.taskDir(row.id) };
    // Written ahead of the spawn: after a crash anywhere from here on, "may have run" is the answer.
    if (!r.spawnMarked) await this.store.markSpawn(row.id);
    const started = await startProcess(spec).catch((err: Error) => ({
      ok: false as const,
      error: err.message,
    }));
    if (!started.ok) {
      this.deps.keys.remove(secret);
      return q.toView((await this.store.fail(row.id, r.from, started.error)) ?? row);
    }
    const p = started.process;
    const set: q.TransitionSet = {
      pid: p.pid,
      boot_id: this.deps.bootId,
      host: this.store.host,
      gateway_pid: process.pid,
      key_digest: sha256Hex(secret),
      error: null,
      exit_code: null,
      stalled_at: null,
      last_activity_at: this.deps.now(),
      ...(r.resetSteps ? { steps: 0 } : {}),
    };
    const moved = await this.toWorking(row.id, r, set, { ...r.summary, pid: p.pid });
    if (!moved) {
      p.terminate(0);
      this.deps.keys.remove(secret);
      throw new AppError(
        'conflict',
        `task ${row.id} changed state while its process started; the process was stopped`,
      );
    }
    const maxMs = Number(moved.max_runtime_ms ?? this.deps.config.max_runtime_seconds * 1000);
    const timer = setTimeout(() => {
      this.expire(row.id, `max runtime of ${maxMs / 1000}s exceeded`).catch((err) =>
        this.deps.logger.error({ err, taskId: row.id }, 'could not fail a task at its max runtime'),
      );
    }, maxMs);
    timer.unref();
    const live: Live = { process: p, secret, timer, done: Promise.resolve() };
    live.done = p.exited
      .then((exit) => this.finish(row.id, live, exit))
      .catch((err) => this.deps.logger.error({ err, taskId: row.id }, 'could not record a task exit'));
    this.live.set(row.id, live);
    return q.toView(moved);
  }

  /**
   * The move to `working` at the spawn, with the launcher's record of it when it has one. A record
   * that fails rolls the whole move back (on PostgreSQL a failed statement ends the transaction): the
   * move is made again without it, and the launcher learns of the start through the relay as of any
   * other change, rather than the run failing for a write that was only a shortcut.
   */
  private async toWorking(
    id: string,
    r: Run,
    set: q.TransitionSet,
    summary: Record<string, unknown>,
  ): Promise<q.TaskRow | undefined> {
    if (r.started) {
      try {
        return await this.store.move(id, r.from, 'working', r.event, set, summary, undefined, r.started);
      } catch (err) {
        this.deps.logger.warn({ err, taskId: id }, "the launcher's record of a task's start failed");
      }
    }
    return this.store.move(id, r.from, 'working', r.event, set, summary);
  }

  private async finish(id: string, live: Live, exit: Exit): Promise<void> {
    clearTimeout(live.timer);
    this.deps.keys.remove(live.secret);
    if (this.live.get(id) === live) this.live.delete(id);
    const code = exit.kind === 'exited' ? exit.code : null;
    const moved =
      exit.kind === 'exited' && exit.code === 0
        ? await this.store.move(
            id,
            RUNNING,
            'completed',
            'agent.task.completed',
            { exit_code: 0 },
            { exit_code: 0 },
          )
        : await this.store.fail(id, RUNNING, exitReason(exit), code);
    if (!moved) await this.store.recordExit(id, code);
  }

  /** A limit was hit: the task fails first (so the exit that follows changes nothing), then the process stops. */
  private async expire(id: string, reason: string): Promise<void> {
    await this.store.fail(id, RUNNING, reason);
    this.live.get(id)?.process.terminate(this.deps.config.kill_grace_seconds * 1000);
  }

  private agentEnv(
    id: string,
    secret: string,
    inputFile: string,
    extra: Record<string, string>,
    depth: number,
    hops: number,
  ) {
    const source = this.deps.env ?? process.env;
    const env: Record<string, string> = {};
    for (const name of this.deps.config.env_passthrough) {
      const v = source[name];
      if (v !== undefined) env[name] = v;
    }
    return {
      ...env,
      ...extra,
      SWITCHBOARD_URL: this.deps.publicUrl(),
      SWITCHBOARD_TASK_ID: id,
      SWITCHBOARD_KEY: secret,
      SWITCHBOARD_INPUT_FILE: inputFile,
      // The loop guard's marker: an agent that posts comments or messages appends it, so when its post
      // comes back as a webhook, admission knows how deep and how many hops long the chain already is
      // (src/ingress/admission/loop.ts; `loop.max_depth`, `loop.max_hops`).
      SWITCHBOARD_DEPTH: String(depth),
      SWITCHBOARD_HOPS: String(hops),
      SWITCHBOARD_DEPTH_MARKER: `<!-- switchboard:depth=${depth} hops=${hops} -->`,
    };
  }

  private taskDir(id: string): string {
    const dir = join(this.deps.workDir, id);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }
}

function exitReason(exit: Exit): string {
  if (exit.kind === 'lost') return exit.error;
  if (exit.signal) return `the agent process was killed by ${exit.signal}`;
  return `the agent process exited with code ${exit.code}`;
}
