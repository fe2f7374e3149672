import type { Envelope } from '../../envelope/index.js';
import type { IngressDeps } from '../module.js';
import type { LaunchRequest, TaskService, TaskState } from '../../tasks/port.js';
import { startWorker, type Worker } from '../../kernel/worker.js';
import { markDelivery } from '../pipeline/deliveries.js';
import { readFacts } from '../pipeline/facts.js';
import { loadPayload } from './payload.js';
import {
  claimRun,
  countActive,
  dueRuns,
  failStaleLaunches,
  finishTask,
  retakeLaunch,
  type RunRow,
  setRunState,
  staleLaunches,
} from './runs.js';
import type { CompiledTrigger } from './triggers.js';

/** Waiting runs are checked this often: it bounds how late a closed window starts its run. */
export const LAUNCH_TICK_MS = 500;
/** A batch per tick keeps one slow launch from holding up the tick forever. */
const BATCH = 50;
/** Far longer than any launch takes (a spawn or one HTTP call): a run still `launching` after it was orphaned by a crash. */
export const LAUNCH_LEASE_MS = 5 * 60_000;

/** Task states after which a run's key is free for its follow-up. */
export const TASK_TERMINAL_TYPES = new Set([
  'agent.task.completed',
  'agent.task.failed',
  'agent.task.canceled',
  'agent.task.rejected',
]);

const TASK_STATES_ENDED: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled', 'rejected']);

/**
 * Hands due runs to `services.tasks`. Without a task service the runs stay `waiting` (admitted, queued)
 * and start once one is running. A run is launched at most once: it is claimed (`waiting` → `launching`)
 * before the launch, the partial unique index refuses a second active run for the same key, and the
 * launch carries the run's id as its idempotency marker, which settles a launch a crash interrupted.
 */
export class Launcher {
  private worker: Worker | undefined;

  constructor(
    private readonly services: IngressDeps,
    private readonly triggers: () => ReadonlyMap<string, CompiledTrigger>,
    /** false: only explicit `runDue` calls launch (tests step through windows themselves). */
    private readonly auto = true,
  ) {}

  start(): void {
    if (!this.auto) return;
    this.worker ??= startWorker({
      name: 'ingress.launcher',
      intervalMs: LAUNCH_TICK_MS,
      tick: async () => {
        await this.runDue();
      },
      onError: (err) =>
        this.services.logger.error({ err }, 'ingress launcher failed; retrying after a back-off'),
    });
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    this.worker = undefined;
  }

  /** Launches soon, off the caller's path; during a pass, one more pass runs right after it. */
  kick(): void {
    this.worker?.wake();
  }

  /** Launches what is due now; returns how many runs were launched. */
  async runDue(): Promise<number> {
    const tasks = this.services.tasks;
    if (!tasks) return 0;
    const { db } = this.services;
    const now = this.services.now();
    let launched = 0;
    const findLaunch = tasks.findLaunch?.bind(tasks);
    if (findLaunch) launched += await this.recoverLaunches(tasks, findLaunch);
    else {
      for (const eventId of await failStaleLaunches(db, now - LAUNCH_LEASE_MS, now)) {
        await markDelivery(db, eventId, 'failed', now, 'the gateway stopped while launching its run');
      }
    }
    for (const run of await dueRuns(db, this.services.now(), BATCH)) {
      const trigger = this.triggers().get(run.trigger_id);
      if (!trigger) {
        await setRunState(db, run.id, 'failed', this.services.now(), {
          error: 'the trigger is no longer configured',
        });
        continue;
      }
      const concurrent = trigger.config.budget?.concurrent;
      if (concurrent !== undefined && (await countActive(db, run.trigger_id)) >= concurrent) continue;
      const claimed = await claimRun(db, run.id, this.services.now());
      if (!claimed) continue;
      if (await this.refuseFrozen(claimed)) continue;
      if (await this.launchClaimed(tasks, claimed, trigger)) launched++;
    }
    return launched;
  }

  /**
   * An incident freeze (`switchboard incidents freeze --tenant` or `--agent <trigger id>`) stops new
   * launches: the run fails with a reason naming the freeze, and nothing runs. The delivery is marked
   * failed, so a sender's redelivery after the unfreeze brings the work back.
   */
  private async refuseFrozen(run: RunRow): Promise<boolean> {
    const frozen = this.services.gate?.frozen;
    if (!frozen || !(await frozen.call(this.services.gate, run.trigger_id))) return false;
    const { db } = this.services;
    const error = `not launched: the tenant or trigger ${run.trigger_id} is frozen (switchboard incidents unfreeze)`;
    await setRunState(db, run.id, 'failed', this.services.now(), { error });
    await markDelivery(db, run.event_id, 'failed', this.services.now(), error);
    return true;
  }

  /** Launches a run this launcher holds in `launching`, with the run's id as the launch's marker. */
  private async launchClaimed(tasks: TaskService, run: RunRow, trigger: CompiledTrigger): Promise<boolean> {
    const { db } = this.services;
    try {
      const req = await this.request(run, trigger);
      const task = await tasks.launch(req);
      await setRunState(db, run.id, 'active', this.services.now(), { taskId: task.id });
      if (TASK_STATES_ENDED.has(task.state)) await finishTask(db, task.id, this.services.now());
      return true;
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      this.services.logger.warn(
        { err, runId: run.id, trigger: run.trigger_id },
        'launching an admitted run failed',
      );
      await setRunState(db, run.id, 'failed', this.services.now(), { error: message });
      // The sender's redelivery may bring the work back: the delivery is no longer marked done.
      await markDelivery(db, run.event_id, 'failed', this.services.now(), `launch failed: ${message}`);
      return false;
    }
  }

  /**
   * Runs left `launching` past the lease: their launcher died between "launching" and "launched".
   * The launch's marker (the run id as `launch_key`) tells what happened, so no agent runs twice:
   * no task with it → nothing ran, the run is launched now; a task that may have run (`started`) →
   * the run follows that task, and the delivery stays done, so a sender's redelivery is a duplicate;
   * a task recorded but never started → the run fails and the delivery may be redelivered.
   */
  private async recoverLaunches(
    tasks: TaskService,
    findLaunch: NonNullable<TaskService['findLaunch']>,
  ): Promise<number> {
    const { db } = this.services;
    let launched = 0;
    for (const stale of await staleLaunches(db, this.services.now() - LAUNCH_LEASE_MS, BATCH)) {
      const run = await retakeLaunch(db, stale, this.services.now());
      if (!run) continue;
      const found = await findLaunch(run.id);
      const now = this.services.now();
      if (!found) {
        const trigger = this.triggers().get(run.trigger_id);
        if (trigger && (await this.launchClaimed(tasks, run, trigger))) launched++;
        else if (!trigger) {
          await setRunState(db, run.id, 'failed', now, { error: 'the trigger is no longer configured' });
        }
      } else if (found.started) {
        await setRunState(db, run.id, 'active', now, { taskId: found.task.id });
        if (TASK_STATES_ENDED.has(found.task.state)) await finishTask(db, found.task.id, now);
      } else {
        await setRunState(db, run.id, 'failed', now, {
          taskId: found.task.id,
          error: 'interrupted before the agent started',
        });
        await markDelivery(
          db,
          run.event_id,
          'failed',
          now,
          'the gateway stopped while launching its run, before the agent started',
        );
      }
    }
    return launched;
  }

  /** A task the launcher started has ended: frees its key for the queued follow-up. */
  async taskEnded(event: Envelope): Promise<void> {
    const taskId = event.execution.task_id;
    if (!taskId) return;
    if ((await finishTask(this.services.db, taskId, this.services.now())) > 0) this.kick();
  }

  private async request(run: RunRow, trigger: CompiledTrigger): Promise<LaunchRequest> {
    const stored = await this.services.log.get(run.event_id);
    if (!stored) throw new Error(`run ${run.id} names event ${run.event_id}, which is not in the log`);
    const cause = stored.envelope;
    const facts = readFacts(cause.redacted_summary);
    if (!facts) throw new Error(`event ${run.event_id} is not an accepted webhook`);
    const loaded = await loadPayload(this.services.vault, cause, facts, this.services.db);
    if (!loaded.ok) throw new Error(`the payload of ${run.event_id} is gone (${loaded.reason})`);
    const { config } = trigger;
    const trusted: Record<string, string> = {
      trigger_id: config.id,
      run_id: run.id,
      source: facts.source,
      source_type: facts.source_type,
      delivery_id: facts.delivery_id,
      event_id: cause.event_id,
      tenant_id: cause.tenant_id,
      depth: String(cause.lineage.depth),
      ...(facts.event ? { event: facts.event } : {}),
      ...(facts.action ? { action: facts.action } : {}),
      ...facts.binding,
      ...fetchedFacts(run.fetched),
    };
    const about = facts.binding.repository ?? facts.binding.project ?? facts.source;
    return {
      trigger_id: config.id,
      action: config.action,
      trusted,
      untrusted: { ref: cause.payload_ref ?? '', digest: cause.payload_digest ?? '', text: loaded.text },
      ...(config.owner ? { owner: config.owner } : {}),
      title: `${config.title ?? config.id}: ${facts.event ?? 'event'}${facts.action ? `.${facts.action}` : ''} on ${about}`,
      cause,
      // The launch's idempotency marker: a launcher recovering from a crash asks the task service what
      // became of it (recoverLaunches), and a repeated launch with it runs nothing.
      launch_key: run.id,
    };
  }
}

/** The run's re-read facts (`fetched.head.sha`, `fetched.state`, …): strings only, whatever the column holds. */
function fetchedFacts(json: string | null): Record<string, string> {
  if (!json) return {};
  const parsed: unknown = JSON.parse(json);
  const out: Record<string, string> = {};
  if (parsed && typeof parsed === 'object')
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
  return out;
}
