import type { ListTasksRequest, ListTasksResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { sdkRoot } from './wire.js';
import type {
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
  TaskStore,
  User,
} from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../kernel/module.js';
import type { Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import { stateName } from './states.js';
import * as q from './sql.js';

/** The caller behind an A2A request: the Switchboard key that made it. */
export class KeyUser implements User {
  constructor(readonly principal: Principal) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.principal.name;
  }
}

/** The principal of a call; the route always sets a `KeyUser`, so anything else is a wiring bug. */
export function principalOf(ctx: ServerCallContext): Principal {
  const user = ctx.user;
  if (!(user instanceof KeyUser)) throw new Error('an A2A call without a Switchboard key');
  return user.principal;
}

/** Whose tasks a call may see: its own, or every owner's for an admin (null). */
function scope(ctx: ServerCallContext): string | null {
  const p = principalOf(ctx);
  return p.role === 'admin' ? null : p.name;
}

/**
 * The metadata key of a status or artifact update naming the event behind it (`StreamResponse`
 * payloads). The update's, not the task's: the SDK merges each update's metadata into its task, so
 * `save` leaves this key out.
 */
export const EVENT_ID_KEY = 'switchboard_event_id';

/** The task without what the SDK merged into its metadata from an update (`EVENT_ID_KEY`). */
function withoutUpdateMetadata(task: Task): Task {
  if (!task.metadata || !(EVENT_ID_KEY in task.metadata)) return task;
  const { [EVENT_ID_KEY]: _update, ...metadata } = task.metadata;
  return { ...task, metadata };
}

export async function taskFromRow(row: q.A2ATaskRow): Promise<Task> {
  return (await sdkRoot()).Task.fromJSON(JSON.parse(row.task));
}

/** A task as stored: its ProtoJSON text. */
export async function taskJson(task: Task): Promise<string> {
  return JSON.stringify((await sdkRoot()).Task.toJSON(task));
}

const MAX_PAGE = 100;

export interface StoreDeps {
  db: Db;
  now: () => number;
}

/**
 * The SDK's `TaskStore` on the project's store: a task is visible only to the key that created it and
 * to admins; to anyone else it does not exist (TaskNotFound, never "forbidden", so ids cannot be probed).
 */
export class A2ATaskStore implements TaskStore {
  constructor(private readonly d: StoreDeps) {}

  /**
   * The SDK saves after every event it relays, mostly the very state the subscriber has just written
   * (it loads, merges, saves): a write that would change nothing is left out, one commit less beside
   * the run's own on every status change (bench `a2a-latency`). The update's event id, which the SDK
   * merges into the task's metadata, is not the task's: without it a WORKING or COMPLETED with no
   * message is the row as recorded (`start.test.ts`).
   */
  async save(sdkTask: Task, ctx: ServerCallContext): Promise<void> {
    const task = withoutUpdateMetadata(sdkTask);
    const row = (await this.d.db.query<q.A2ATaskRow>(q.selectTask(task.id)))[0];
    const state = stateName(task.status?.state);
    if (row && row.state === state && row.task === (await taskJson(task))) return;
    // The first snapshot, saved after the run's start was already recorded: refused anyway (`q.upsertTask`).
    if (row && state === 'TASK_STATE_SUBMITTED' && row.state !== state) return;
    await this.write(this.d.db, task, principalOf(ctx).name, null);
  }

  /**
   * Writes `task` (as ProtoJSON) for `owner`; `causeEventId` is set once, by the executor, and with
   * it the new task's Switchboard task when one was made in the same transaction.
   */
  async write(
    db: Db,
    task: Task,
    owner: string,
    causeEventId: string | null,
    sbTaskId: string | null = null,
  ): Promise<void> {
    await db.query(
      q.upsertTask({
        id: task.id,
        owner,
        contextId: task.contextId,
        causeEventId,
        state: stateName(task.status?.state),
        task: await taskJson(task),
        now: this.d.now(),
        skill: typeof task.metadata?.skill === 'string' ? task.metadata.skill : null,
        sbTaskId,
      }),
    );
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<Task | undefined> {
    const row = await this.row(taskId, ctx);
    return row ? await taskFromRow(row) : undefined;
  }

  /** The row when this caller may see it. */
  async row(taskId: string, ctx: ServerCallContext): Promise<q.A2ATaskRow | undefined> {
    const row = (await this.d.db.query<q.A2ATaskRow>(q.selectTask(taskId)))[0];
    const owner = scope(ctx);
    if (!row || (owner !== null && row.owner !== owner)) return undefined;
    return row;
  }

  async list(params: ListTasksRequest, ctx: ServerCallContext): Promise<ListTasksResponse> {
    const owner = scope(ctx);
    const pageSize = Math.min(params.pageSize ?? 50, MAX_PAGE);
    const before = params.pageToken ? parsePageToken(params.pageToken) : undefined;
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const rows = await this.d.db.query<q.A2ATaskRow>(
      q.listTasks({
        owner,
        ...(params.contextId ? { contextId: params.contextId } : {}),
        ...(params.status ? { state: stateName(params.status) } : {}),
        ...(after !== undefined ? { updatedAfter: after } : {}),
        ...(before ? { before } : {}),
        limit: pageSize + 1,
      }),
    );
    const page = rows.slice(0, pageSize);
    const last = page.at(-1);
    const total = await this.d.db.query<{ n: number }>(q.countTasks(owner));
    const tasks = await Promise.all(page.map(taskFromRow));
    return {
      tasks: params.includeArtifacts ? tasks : tasks.map((t) => ({ ...t, artifacts: [] })),
      nextPageToken: rows.length > pageSize && last ? `${Number(last.created_at)}.${last.id}` : '',
      pageSize,
      totalSize: Number(total[0]?.n ?? 0),
    };
  }
}

function parsePageToken(token: string): { createdAt: number; id: string } {
  const m = /^(\d+)\.(.+)$/.exec(token);
  if (!m) throw new RequestMalformedError('pageToken: not a token this server issued');
  return { createdAt: Number(m[1]), id: m[2]! };
}

/** A push config that passed the checks, with its id, waiting to be stored. */
export interface CheckedPushConfig {
  config: TaskPushNotificationConfig;
  wire: '0.3' | '1.0';
}

export interface PushStoreDeps extends StoreDeps {
  vault: Vault;
  tenantId: string;
  tasks: A2ATaskStore;
  /** Refuses a callback URL or credentials with the reason (egress guard, CR/LF); see push.ts. */
  check(config: TaskPushNotificationConfig): Promise<void>;
}

/**
 * The SDK's `PushNotificationStore` on the project's store. The credentials of a config's
 * `authentication` are sealed in the vault (the row keeps only the ref); a config belongs to an
 * existing task the caller may see, and goes with it.
 */
export class A2APushStore implements PushNotificationStore {
  constructor(private readonly d: PushStoreDeps) {}

  async save(taskId: string, ctx: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const checked = await this.prepare(config, ctx);
    await this.d.db.tx((tx) => this.write(tx, taskId, checked));
  }

  /** The checks of a config before anything is stored (refused with the reason); its id and wire version. */
  async prepare(config: TaskPushNotificationConfig, ctx: ServerCallContext): Promise<CheckedPushConfig> {
    await this.d.check(config);
    // Set on the caller's object: the SDK answers CreateTaskPushNotificationConfig with it.
    if (!config.id) config.id = randomUUID();
    return {
      config,
      wire: ctx.requestedVersion === '0.3' ? '0.3' : '1.0',
    };
  }

  /** Stores a checked config for `taskId` in the caller's transaction (its credentials sealed). */
  async write(tx: Db, taskId: string, checked: CheckedPushConfig): Promise<void> {
    const { config, wire } = checked;
    const auth = config.authentication;
    const sealed =
      auth?.credentials !== undefined && auth.credentials !== ''
        ? await this.d.vault.put(auth.credentials, { tenantId: this.d.tenantId, db: tx })
        : undefined;
    await tx.query(
      q.upsertPushConfig({
        task_id: taskId,
        id: config.id,
        url: config.url,
        token: config.token ?? '',
        auth_scheme: auth?.scheme ? auth.scheme : null,
        auth_ref: sealed?.ref ?? null,
        wire_version: wire,
        now: this.d.now(),
      }),
    );
  }

  async load(taskId: string, ctx: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, ctx)).map((s) => s.config);
  }

  /** The configs as a caller sees them: the credentials are never read back out. */
  async loadWithMetadata(taskId: string, ctx: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    if (!(await this.d.tasks.row(taskId, ctx))) return [];
    const rows = await this.d.db.query<q.PushConfigRow>(q.selectPushConfigs(taskId));
    return rows.map((r) => ({ config: publicConfig(r), wireVersion: r.wire_version }));
  }

  async delete(taskId: string, ctx: ServerCallContext, configId?: string): Promise<void> {
    if (!(await this.d.tasks.row(taskId, ctx))) return;
    await this.d.db.query(q.deletePushConfigs(taskId, configId));
  }
}

function publicConfig(r: q.PushConfigRow): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: r.id,
    taskId: r.task_id,
    url: r.url,
    token: r.token,
    authentication: r.auth_scheme ? { scheme: r.auth_scheme, credentials: '' } : undefined,
  };
}
