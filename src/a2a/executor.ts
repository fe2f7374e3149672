import type {
  Message,
  Part,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { TaskState } from './wire.js';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import type { Envelope, EnvelopeInput } from '../envelope/index.js';
import type { Principal } from '../kernel/module.js';
import type { Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import type { LaunchRequest, PreparedLaunch, TaskService } from '../tasks/port.js';
import type { A2ASkill } from './config.js';
import { isTerminal } from './states.js';
import { AGENT_EXITED } from './subscriber.js';
import { inlineKey } from './inline.js';
import { type A2ATaskStore, EVENT_ID_KEY, principalOf, taskFromRow } from './store.js';
import type { OwnEnd } from './record.js';
import { serverSdk } from './sdk.js';
import * as q from './sql.js';

/** The SDK's event constructors: `execute` runs only after the server side loaded (sdk.ts). */
const AgentEvent = () => serverSdk().server.AgentEvent;

/**
 * A change of one A2A task as the subscriber saw it commit: a new status (a task event, a progress
 * report) or a new artifact (a `done` report). The shape of a `StreamResponse` payload.
 */
export type Update =
  | { $case: 'statusUpdate'; value: TaskStatusUpdateEvent }
  | { $case: 'artifactUpdate'; value: TaskArtifactUpdateEvent };

/**
 * Live status changes by A2A task id, for the runs waiting in this process (a blocking SendMessage, a
 * stream). The durable path is the subscriber's write; this only tells the waiters it happened.
 */
export class Updates {
  private readonly listeners = new Map<string, Set<(u: Update | undefined) => void>>();

  listen(taskId: string, fn: (u: Update | undefined) => void): () => void {
    const set = this.listeners.get(taskId) ?? new Set();
    set.add(fn);
    this.listeners.set(taskId, set);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(taskId);
    };
  }

  emit(u: Update): void {
    for (const fn of this.listeners.get(u.value.taskId) ?? []) fn(u);
  }

  /** The gateway is stopping: every waiter returns (the task goes on; its row keeps its state). */
  closeAll(): void {
    for (const set of this.listeners.values()) for (const fn of set) fn(undefined);
    this.listeners.clear();
  }
}

export interface ExecutorDeps {
  db: Db;
  vault: Vault;
  tenantId: string;
  tasks: () => TaskService;
  store: A2ATaskStore;
  updates: Updates;
  emit(input: EnvelopeInput, db?: Db): Promise<Envelope>;
  skill(id: string): A2ASkill;
  skillOf(request: RequestContext['request']): string;
  /** Who asked to cancel a task (set by the handler just before the SDK calls `cancelTask`). */
  cancelers: Map<string, Principal>;
  /** The `loop` section's limits, read on each message. */
  loop: () => LoopLimits;
  /**
   * Enqueues the pushes of a change the executor itself records (a task REJECTED before anything
   * runs), in its transaction, as the subscriber does for task events. Absent without delivery.
   */
  pushed?: (tx: Db, taskId: string, update: Update, event: Envelope) => Promise<void>;
  /**
   * Takes the push config sent with the message (checked by the handler), to store it in the
   * transaction that writes the task; undefined when none was sent.
   */
  takeInlinePush?(key: string): ((tx: Db, taskId: string) => Promise<void>) | undefined;
  /** Records an end with no task event behind it, with its event and terminal push (`record.ts`). */
  end(taskId: string, end: OwnEnd): Promise<boolean>;
  /**
   * Records a launched run's start (WORKING, its push, the link) in the tasks module's transaction
   * that makes it (`LaunchRequest.started`, `subscriber.ts` `startedInLaunch`); absent: the subscriber
   * records it after the relay.
   */
  started?(tx: Db, taskId: string, event: Envelope): Promise<void>;
  now: () => number;
}

/** What `loop.*` (the ingress section) allows derived work; skills obey it as triggers do. */
export interface LoopLimits {
  maxDepth: number;
  tenantRunsPerDay?: number;
}

interface Refusal {
  reason: string;
  limit: number;
  text: string;
}

/** The text an agent process is handed: text parts as they are, data parts as JSON, files by name. */
export function messageText(message: Message): string {
  return message.parts.map(partText).join('\n\n');
}

function partText(p: Part): string {
  const c = p.content;
  switch (c?.$case) {
    case 'text':
      return c.value;
    case 'data':
      return JSON.stringify(c.value);
    case 'url':
      return `[file ${p.filename || ''} at ${c.value}]`;
    case 'raw':
      return `[file ${p.filename || ''}, ${c.value.length} bytes, not inlined]`;
    default:
      return '';
  }
}

export function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: 2,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function status(state: TaskState, at: number, message?: Message): TaskStatus {
  return { state, timestamp: new Date(at).toISOString(), message };
}

/**
 * Runs a skill as a Switchboard task. The A2A task row and the message's cause event commit together
 * before the launch, so every task event (whose causation is that event) finds its A2A task; the run
 * then mirrors what the subscriber records until the task ends.
 */
export class SkillExecutor implements AgentExecutor {
  /** Cancels asked for by task id, for a run whose launch was still under way (cleared when it ends). */
  private readonly canceled = new Map<string, Principal>();

  constructor(private readonly d: ExecutorDeps) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const skill = this.d.skill(this.d.skillOf(ctx.request));
    const principal = principalOf(ctx.context);
    const user = ctx.userMessage;
    const now = this.d.now();
    const resumes = await this.sessionToResume(ctx, principal, skill.id);
    // An input-required task continues as itself (the SDK has added the message to its history).
    const task: Task = ctx.task ?? {
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: status(TaskState.TASK_STATE_SUBMITTED, now),
      artifacts: [],
      history: [{ ...user, taskId: ctx.taskId, contextId: ctx.contextId }],
      metadata: { skill: skill.id },
    };
    const text = messageText(user);
    const inlinePush = this.d.takeInlinePush?.(inlineKey(principal.name, user.messageId));
    // A launched agent calling a skill with its task key is derived work one level below its task:
    // the message is at the task's depth, and what it launches one deeper (as for triggers).
    const depth = principal.task_id ? ((await this.d.tasks().get(principal.task_id))?.lineage.depth ?? 0) : 0;
    // Set once a record that links the task has committed (this transaction's, or the start's).
    let linked = false;
    const started = this.d.started;
    const launchRequest = (cause: Envelope, sealed: { ref: string; digest: string }): LaunchRequest => ({
      trigger_id: `a2a.${skill.id}`,
      action: skill.action,
      trusted: { skill: skill.id, a2a_task_id: task.id, context_id: task.contextId },
      untrusted: { ref: sealed.ref, digest: sealed.digest, text },
      owner: principal.name,
      title: skill.name,
      cause,
      launch_key: `a2a:${task.id}`,
      // A run whose gateway died before the spawn is failed at restart either way (tasks' recover):
      // its spawn mark may as well commit with the task, one commit less before the process starts.
      spawn_mark_at_submit: true,
      ...(started
        ? {
            started: async (tx: Db, event: Envelope) => {
              await started(tx, task.id, event);
              tx.afterCommit(() => {
                linked = true;
              });
            },
          }
        : {}),
    });
    const tasks = this.d.tasks();
    const { cause, sealed, over, launching } = await this.d.db.tx(async (tx) => {
      // A follow-up to an input-required task is that task's; any new task counts against the limits.
      const over = ctx.task
        ? undefined
        : (overLoop(depth, this.d.loop()) ??
          (await overBudget(tx, skill, now)) ??
          (await overTenant(tx, this.d.loop(), now)));
      if (over)
        task.status = status(
          TaskState.TASK_STATE_REJECTED,
          now,
          agentMessage(task.id, task.contextId, over.text),
        );
      const sealed = await this.d.vault.put(text, { tenantId: this.d.tenantId, db: tx });
      const cause = await this.d.emit(
        {
          type: 'agent.message.received',
          actor: { user_id: principal.name },
          payload_ref: sealed.ref,
          payload_digest: sealed.digest,
          lineage: { hop_count: 0, depth },
          redacted_summary: {
            a2a_task_id: task.id,
            context_id: task.contextId,
            skill: skill.id,
            ...(resumes && !over ? { resumes_task_id: resumes } : {}),
            ...(over ? { rejected: over.reason, limit: over.limit } : {}),
          },
        },
        tx,
      );
      // A new run's Switchboard task is written here too, and the A2A task with the link to it: its
      // process starts after this commit (`prepareLaunch`), one commit less between the message and
      // its WORKING push.
      let launching: PreparedLaunch | undefined;
      if (!over && !resumes && tasks.prepareLaunch)
        launching = await tasks.prepareLaunch(tx, launchRequest(cause, sealed));
      // Linked before a resume starts, so the resumed run's events find this task (the newest); a new
      // task is written with its link, an input-required one continuing (`ctx.task`) is linked anew.
      // A launch without the split (no `prepareLaunch`) is linked once it has started.
      const link = launching?.task?.id ?? (resumes && !over ? resumes : undefined);
      if (!ctx.task) await this.d.store.write(tx, task, principal.name, cause.event_id, link ?? null);
      else if (link) await tx.query(q.linkSwitchboardTask(task.id, link));
      await inlinePush?.(tx, task.id);
      // A new task's first state (SUBMITTED, or REJECTED when it ends here) is pushed from this
      // commit, to a config sent with the message: the task, its config and the push go together.
      if (!ctx.task && task.status)
        await this.d.pushed?.(
          tx,
          task.id,
          {
            $case: 'statusUpdate',
            value: {
              taskId: task.id,
              contextId: task.contextId,
              status: task.status,
              metadata: { [EVENT_ID_KEY]: cause.event_id },
            },
          },
          cause,
        );
      return { cause, sealed, over, launching };
    });
    if (over) {
      bus.publish(AgentEvent().task(task));
      return;
    }
    const ended = this.waitForEnd(task.id, bus);
    bus.publish(AgentEvent().task(task));
    if (resumes) {
      try {
        await this.d.tasks().resume(resumes, text, principal);
      } catch (err) {
        ended.stop();
        const why = `the session could not be resumed: ${(err as Error).message}`;
        // A continuation that could not start leaves the input-required task as it was (its agent
        // may still be waiting on its approval), and gives the claim back for the next message.
        if (ctx.task) await this.stillInputRequired(bus, task, why);
        else await this.fail(bus, task, why);
        return;
      }
      await ended.done;
      return;
    }
    if (launching?.task) linked = true;
    try {
      const view = launching ? await launching.start() : await tasks.launch(launchRequest(cause, sealed));
      if (!linked) await this.d.db.query(q.linkSwitchboardTask(task.id, view.id));
      // A cancel that came while the launch was under way found no Switchboard task to stop: stop it now.
      const by = this.canceled.get(task.id);
      if (by) await cancelSwitchboardTask(this.d.db, this.d.tasks(), task.id, by, this.d.end);
    } catch (err) {
      ended.stop();
      const by = this.canceled.get(task.id);
      this.canceled.delete(task.id);
      // A cancel that came during the launch stopped it (the launch then fails on the task it canceled):
      // the task ends CANCELED, as the cancel's own event says too, whichever is recorded first.
      if (by)
        await this.end(bus, task, {
          state: TaskState.TASK_STATE_CANCELED,
          reason: `canceled by ${by.name}`,
          by: by.name,
        });
      else await this.fail(bus, task, `the skill could not be launched: ${(err as Error).message}`);
      return;
    }
    await ended.done;
    this.canceled.delete(task.id);
  };

  private async stillInputRequired(bus: ExecutionEventBus, task: Task, why: string): Promise<void> {
    const kept = status(
      TaskState.TASK_STATE_INPUT_REQUIRED,
      this.d.now(),
      agentMessage(task.id, task.contextId, why),
    );
    bus.publish(
      AgentEvent().statusUpdate({ taskId: task.id, contextId: task.contextId, status: kept, metadata: {} }),
    );
    await this.d.db.query(q.releaseInput(task.id, null));
  }

  /**
   * A run that could not start: FAILED is recorded with its event and terminal push (no task event
   * will ever say it), then published so the request answers with it. When the task had already ended
   * (a cancel won), the bus hears the recorded state instead.
   */
  private async fail(bus: ExecutionEventBus, task: Task, why: string): Promise<void> {
    await this.end(bus, task, { state: TaskState.TASK_STATE_FAILED, reason: why });
  }

  /** Records an end with no task event behind it, then publishes the state the task has (`fail`). */
  private async end(bus: ExecutionEventBus, task: Task, end: OwnEnd): Promise<void> {
    const why = end.reason;
    await this.d.end(task.id, end);
    const row = (await this.d.db.query<q.A2ATaskRow>(q.selectTask(task.id)))[0];
    const recorded = row ? (await taskFromRow(row)).status : undefined;
    const failed = recorded ?? status(end.state, this.d.now(), agentMessage(task.id, task.contextId, why));
    bus.publish(
      AgentEvent().statusUpdate({ taskId: task.id, contextId: task.contextId, status: failed, metadata: {} }),
    );
  }

  /**
   * The Switchboard task whose session this message continues: the input-required task it names, or
   * the newest task of its context when that ran the same skill. A new context launches afresh.
   */
  private async sessionToResume(
    ctx: RequestContext,
    principal: Principal,
    skillId: string,
  ): Promise<string | undefined> {
    if (ctx.task)
      return (await this.d.db.query<q.A2ATaskRow>(q.selectTask(ctx.task.id)))[0]?.sb_task_id ?? undefined;
    const latest = (
      await this.d.db.query<q.A2ATaskRow>(
        q.listTasks({ owner: principal.name, contextId: ctx.contextId, limit: 1 }),
      )
    )[0];
    if (!latest?.sb_task_id || (await taskFromRow(latest)).metadata?.skill !== skillId) return undefined;
    return latest.sb_task_id;
  }

  /**
   * The handler checked the caller may cancel; stopping the Switchboard task (process group included)
   * makes its `agent.task.canceled` event, which the run waiting in `execute` publishes as CANCELED.
   */
  cancelTask = async (taskId: string): Promise<void> => {
    const by = this.d.cancelers.get(taskId) ?? { name: 'a2a', role: 'admin' as const };
    this.d.cancelers.delete(taskId);
    this.canceled.set(taskId, by);
    await cancelSwitchboardTask(this.d.db, this.d.tasks(), taskId, by, this.d.end);
  };

  /** Publishes each recorded status change on the bus until the task ends (or the gateway stops). */
  private waitForEnd(taskId: string, bus: ExecutionEventBus): { done: Promise<void>; stop(): void } {
    let stop = () => {};
    const done = new Promise<void>((resolve) => {
      const off = this.d.updates.listen(taskId, (u) => {
        if (u?.$case === 'statusUpdate') bus.publish(AgentEvent().statusUpdate(u.value));
        if (u?.$case === 'artifactUpdate') bus.publish(AgentEvent().artifactUpdate(u.value));
        if (!u || (u.$case === 'statusUpdate' && isTerminal(u.value.status?.state))) {
          off();
          resolve();
        }
      });
      stop = () => {
        off();
        resolve();
      };
    });
    return { done, stop };
  }
}

const DAY_MS = 86_400_000;

/** A message from an agent already `loop.max_depth` levels deep launches nothing (ingress's `depth_limit`). */
function overLoop(depth: number, loop: LoopLimits): Refusal | undefined {
  if (depth < loop.maxDepth) return undefined;
  return {
    reason: 'depth_limit',
    limit: loop.maxDepth,
    text: `rejected: the calling agent's task is ${depth} levels deep; loop.max_depth allows ${loop.maxDepth}`,
  };
}

/**
 * `loop.tenant_runs_per_day`: the A2A tasks of every skill today, counted in the transaction that
 * writes the task (under the skill-budget lock on PostgreSQL). Ingress counts its trigger runs against
 * the same number on its own side.
 */
async function overTenant(tx: Db, loop: LoopLimits, now: number): Promise<Refusal | undefined> {
  const cap = loop.tenantRunsPerDay;
  if (cap === undefined) return undefined;
  if (tx.dialect === 'postgres') await tx.query(q.lockSkillBudgets());
  const used = Number((await tx.query<{ n: number }>(q.countTasksSince(now - (now % DAY_MS))))[0]?.n ?? 0);
  if (used < cap) return undefined;
  return {
    reason: 'budget_tenant_per_day',
    limit: cap,
    text: `rejected: ${cap} A2A tasks have run today (loop.tenant_runs_per_day)`,
  };
}

/**
 * Whether a new task of `skill` would exceed its budget (docs/a2a.md "Budgets"): counted in the
 * transaction that writes the task, under a lock on PostgreSQL, so two messages at once cannot both
 * take the last place.
 */
async function overBudget(tx: Db, skill: A2ASkill, now: number): Promise<Refusal | undefined> {
  const { per_day, concurrent } = skill.budget ?? {};
  if (per_day === undefined && concurrent === undefined) return undefined;
  if (tx.dialect === 'postgres') await tx.query(q.lockSkillBudgets());
  const count = async (s: ReturnType<typeof q.countSkillTasksOpen>) =>
    Number((await tx.query<{ n: number }>(s))[0]?.n ?? 0);
  if (
    per_day !== undefined &&
    (await count(q.countSkillTasksSince(skill.id, now - (now % DAY_MS)))) >= per_day
  )
    return {
      reason: 'budget_per_day',
      limit: per_day,
      text: `rejected: skill ${skill.id} has run its ${per_day} tasks for today (a2a.skills[].budget.per_day)`,
    };
  if (concurrent !== undefined && (await count(q.countSkillTasksOpen(skill.id))) >= concurrent)
    return {
      reason: 'budget_concurrent',
      limit: concurrent,
      text: `rejected: skill ${skill.id} already runs ${concurrent} tasks at once (a2a.skills[].budget.concurrent)`,
    };
  return undefined;
}

/**
 * Cancels the Switchboard task behind an A2A task; one that already ended is left to its own event.
 * Two cases have no event to wait for, so the cancel is recorded here (`agent.a2a_task.canceled`, with
 * its terminal push): a task whose agent exited while it was INPUT_REQUIRED (its Switchboard task has
 * ended, the A2A task still waits for a message), and a task with no Switchboard task at all when no
 * run in this process is launching one (`detached`: the gateway stopped between the two).
 */
export async function cancelSwitchboardTask(
  db: Db,
  tasks: TaskService,
  taskId: string,
  by: Principal,
  end: (taskId: string, end: OwnEnd) => Promise<boolean>,
  detached = false,
): Promise<void> {
  const row = (await db.query<q.A2ATaskRow>(q.selectTask(taskId)))[0];
  const ownEnd = (): Promise<boolean> =>
    end(taskId, {
      state: TaskState.TASK_STATE_CANCELED,
      reason: `canceled by ${by.name}`,
      by: by.name,
    });
  // Not linked yet: the launch records its key before anything runs, so the task may be found by it.
  const sbTaskId = row?.sb_task_id ?? (await tasks.findLaunch?.(`a2a:${taskId}`))?.task.id;
  if (!sbTaskId) {
    if (detached) await ownEnd();
    return;
  }
  if (!tasks.cancel) return;
  try {
    await tasks.cancel(sbTaskId, by);
  } catch (err) {
    // An ended task is a conflict: its terminal event is on its way, and the handler then answers
    // TaskNotCancelable from the state it records, unless its agent exited with the task waiting.
    if ((err as { code?: string }).code !== 'conflict') throw err;
    const held = row ? (await taskFromRow(row)).metadata?.[AGENT_EXITED] !== undefined : false;
    if (held) await ownEnd();
  }
}
