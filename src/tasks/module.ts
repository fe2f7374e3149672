import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { clusterPort, leaderOnly } from '../cluster/port.js';
import { once } from '../log/inbox.js';
import { type Deps, defineModule, type Module, type Services } from '../kernel/module.js';
import { optional } from '../kernel/port.js';
import { type TasksConfig, type TasksConfigInput, parseTasksConfig, tasksConfigSchema } from './config.js';
import { type Egress, liveEgress } from '../egress/index.js';
import { type Poster, egressPoster } from './http.js';
import { tasksPort } from './port.js';
import { effectsPort } from '../effects/port.js';
import { taskRoutes } from './routes.js';
import { TaskRunner } from './service.js';
import { type Leadership, Supervisor } from './supervisor.js';

export interface TasksModuleOptions {
  /** Replaces the `tasks:` section (tests). */
  config?: TasksConfigInput;
  /** How `http` actions POST; default egress's post, built from `egress.allow` at start. */
  poster?: Poster;
  /** The egress the default poster uses (tests: loopback-only sockets); default from `egress.allow`. */
  egress?: Egress;
  /** Default: a fresh UUID per process start. */
  bootId?: string;
  /** Default: the cluster's lease when the cluster module runs, else the PostgreSQL advisory lock (always leader on SQLite). */
  leader?: Leadership;
  /** Default: true. Tests drive `supervisor.tick()` themselves. */
  runSupervisor?: boolean;
  /** Where passthrough environment variables come from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * How often the leader looks for tasks of replicas that died: a dead replica's runs end within this
 * much of its heartbeat going past the lease (the cluster's dead-replica threshold).
 */
export const ORPHAN_SWEEP_MS = 5_000;

const sections = { tasks: tasksConfigSchema.prefault({}) };
/**
 * The supervisor runs on the cluster's leader only (docs/scale.md); alone, it takes its own lock.
 * Effects (optional): an `http` action's POST is recorded with its receipt.
 */
const requires = { cluster: optional(clusterPort), effects: optional(effectsPort) };
type TasksDeps = Deps<typeof requires, typeof sections>;

export interface TasksModule extends Module<typeof requires, typeof sections> {
  readonly runner: TaskRunner | undefined;
  readonly supervisor: Supervisor | undefined;
}

const APPROVAL_EVENTS = new Set([
  'agent.approval.requested',
  'agent.approval.approved',
  'agent.approval.rejected',
  'agent.approval.expired',
]);

/** Tasks: launching actions, the task API, approvals driving `input-required`, the stall supervisor. */
export function tasksModule(opts: TasksModuleOptions = {}): TasksModule {
  let runner: TaskRunner | undefined;
  let supervisor: Supervisor | undefined;
  let egress: Egress | undefined;
  return {
    ...defineModule({
      name: 'tasks',
      config: sections,
      requires,
      provides: [tasksPort],
      migrations: new URL('./migrations/', import.meta.url),
    }),
    get runner() {
      return runner;
    },
    get supervisor() {
      return supervisor;
    },
    routes(app, s) {
      taskRoutes(app, s, () => runner);
    },
    async start(s: TasksDeps) {
      const cfg = readConfig(s, opts.config);
      egress = opts.egress ?? liveEgress(s);
      runner = new TaskRunner({
        db: s.db,
        emit: (input, db) => s.emit(input, db),
        keys: s.keys,
        now: s.now,
        logger: s.logger,
        config: cfg,
        workDir: resolve(cfg.work_dir ?? join(s.config.data_dir, 'tasks')),
        publicUrl: () => publicUrl(s),
        poster: opts.poster ?? egressPoster(egress),
        bootId: opts.bootId ?? randomUUID(),
        ...(opts.env ? { env: opts.env } : {}),
        effects: () => s.effects,
      });
      const recovered = await runner.recover();
      if (recovered > 0)
        s.logger.warn({ recovered }, 'failed tasks left running by an earlier gateway process');
      s.provide(tasksPort, runner);
      supervisor = new Supervisor({
        db: s.db,
        emit: (input, db) => s.emit(input, db),
        now: s.now,
        logger: s.logger,
        stallAfterMs: cfg.stall_after_seconds * 1000,
        intervalMs: cfg.supervisor_interval_seconds * 1000,
        ...(opts.leader ? { leader: opts.leader } : s.cluster ? { leader: clusterLeadership(s) } : {}),
      });
      if (opts.runSupervisor !== false) supervisor.start();
    },
    workers(s) {
      if (!s.cluster || opts.runSupervisor === false) return [];
      // A singleton (docs/scale.md): every replica could fail a dead one's tasks, one is enough.
      return [
        leaderOnly(() => s.cluster, {
          name: 'tasks.orphans',
          intervalMs: ORPHAN_SWEEP_MS,
          tick: async () => {
            const cluster = s.cluster;
            if (!cluster || !runner) return;
            const failed = await runner.recoverDead(await cluster.deadReplicas(), (tx) => cluster.fence(tx));
            if (failed > 0) s.logger.warn({ failed }, 'failed tasks left running by a replica that died');
          },
        }),
      ];
    },
    subscribers(s) {
      const tasks = runner!;
      return [
        {
          name: 'tasks.approvals',
          accepts: (type) => APPROVAL_EVENTS.has(type),
          ownsInbox: true,
          handle: async (event) => {
            await once(s.db, 'tasks.approvals', event.event_id, (tx) => tasks.onApproval(event, tx), s.now());
          },
        },
      ];
    },
    async stop() {
      await supervisor?.stop();
      await runner?.stop();
      if (!opts.egress) await egress?.close();
    },
  };
}

/** The cluster's lease as the supervisor's leadership: ask at each tick, fence each stall's transaction. */
function clusterLeadership(s: TasksDeps): Leadership {
  return {
    acquire: async () => s.cluster?.isLeader() ?? true,
    release: async () => {},
    fence: async (tx) => {
      await s.cluster?.fence(tx);
    },
  };
}

function readConfig(s: TasksDeps, override: TasksConfigInput | undefined): TasksConfig {
  return override ? parseTasksConfig(override) : s.config.tasks;
}

/** `server.public_url` when set (a phone or a remote agent can reach it), else the listen address. */
export function publicUrl(s: Pick<Services, 'config'>): string {
  if (s.config.server.public_url) return s.config.server.public_url.replace(/\/+$/, '');
  const host = s.config.server.host;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const shown = reachable.includes(':') ? `[${reachable}]` : reachable;
  return `http://${shown}:${s.config.server.port}`;
}
