import { randomUUID } from 'node:crypto';
import type { PushNotificationSender } from '@a2a-js/sdk/server';
import { approvalsPort } from '../approvals/port.js';
import { deliveryPort } from '../delivery/port.js';
import { type Egress, liveEgress, type Resolver } from '../egress/index.js';
import { AppError } from '../errors/index.js';
import { optional } from '../kernel/port.js';
import { type Deps, defineModule, type Module, type Principal } from '../kernel/module.js';
import { publicUrl } from '../tasks/module.js';
import { tasksPort } from '../tasks/port.js';
import { agentCard, JWKS_PATH } from './card.js';
import { SigningKeys } from './keys.js';
import { checkPushConfig, enqueuePushes, PreparedPushes, pushSender } from './push.js';
import { a2aConfigSchema } from './config.js';
import { cancelSwitchboardTask, type LoopLimits, SkillExecutor, type Update, Updates } from './executor.js';
import type { Envelope } from '../envelope/index.js';
import type { Db } from '../store/port.js';
import type { SwitchboardRequestHandler } from './handler.js';
import { a2aRoutes } from './routes.js';
import { loadServerSdk } from './sdk.js';
import { A2APushStore, A2ATaskStore, type CheckedPushConfig, taskFromRow } from './store.js';
import { isTerminal } from './states.js';
import { type OwnEnd, recordEnd } from './record.js';
import { StartsHere, startedInLaunch, taskEventSubscriber } from './subscriber.js';
import * as q from './sql.js';

const sections = { a2a: a2aConfigSchema.prefault({}) };
const requires = { tasks: tasksPort, delivery: optional(deliveryPort), approvals: optional(approvalsPort) };
type A2ADeps = Deps<typeof requires, typeof sections>;

const VERSION = '0.1.0';
/** Ingress's default `loop.max_depth`, for a config parsed without the ingress section. */
const DEFAULT_MAX_DEPTH = 3;

/**
 * The `loop` section (owned by ingress: derived work's depth and storm limits), read as data, so
 * skills obey the same limits as triggers without importing ingress.
 */
function loopLimits(config: unknown): LoopLimits {
  const loop = (config as { loop?: { max_depth?: number; tenant_runs_per_day?: number } }).loop;
  return {
    maxDepth: loop?.max_depth ?? DEFAULT_MAX_DEPTH,
    ...(loop?.tenant_runs_per_day !== undefined ? { tenantRunsPerDay: loop.tenant_runs_per_day } : {}),
  };
}

/** An inline push config not taken by its executor within this is dropped (its message failed first). */
const INLINE_PUSH_TTL_MS = 60_000;

/** A claim on an input-required task older than this is taken over: the gateway holding it died. */
const INPUT_CLAIM_STALE_MS = 60_000;

/**
 * How long a CancelTask with no run attached in this process waits for its end to be recorded (the
 * task event relayed to the subscriber, on PostgreSQL possibly by another gateway) before the SDK
 * answers from the stored task: TaskNotCancelable if it is still open by then.
 */
const CANCEL_RECORD_WAIT_MS = 10_000;
/** The stored state is read this often while waiting (a change recorded by another gateway). */
const CANCEL_POLL_MS = 50;

/** Resolves once the task's row is terminal (or after `ms`): the in-process update, or a poll of the row. */
async function endRecorded(db: Db, updates: Updates, taskId: string, ms: number): Promise<void> {
  const ended = async () => {
    const row = (await db.query<q.A2ATaskRow>(q.selectTask(taskId)))[0];
    return !row || isTerminal((await taskFromRow(row)).status?.state);
  };
  let wake = () => {};
  const off = updates.listen(taskId, () => wake());
  try {
    const deadline = Date.now() + ms;
    while (!(await ended()) && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CANCEL_POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    off();
  }
}

/**
 * The SDK pushes each event it sees from the request path, fire-and-forget. Switchboard's pushes leave
 * from the task-event subscriber instead (durable, once per event); this sender stands in so the SDK
 * does not build its own `DefaultPushNotificationSender`.
 */
const pushesLeaveFromTheLog: PushNotificationSender = { send: async () => {} };

/**
 * A2A v1.0: Switchboard as an A2A agent (docs/a2a.md). The card, the JSON-RPC binding through the
 * SDK's request handler on Switchboard's own task and push-config stores, skills launched as
 * Switchboard tasks, and their states from the task events.
 */
export interface A2AModuleOptions {
  /** DNS for the push-URL check (tests: names that resolve to private addresses, never looked up). */
  resolve?: Resolver;
}

export function a2aModule(opts: A2AModuleOptions = {}): Module<typeof requires, typeof sections> {
  /** Builds the request handler with the SDK's server side on the first JSON-RPC request (sdk.ts). */
  let handler: (() => Promise<SwitchboardRequestHandler>) | undefined;
  let keys: SigningKeys | undefined;
  let egress: Egress | undefined;
  let prepared: PreparedPushes | undefined;
  const updates = new Updates();
  const startsHere = new StartsHere();
  // Pushes need the delivery engine; without it the card says there are none.
  const cardFor = (s: A2ADeps) =>
    agentCard(
      { ...s.config.a2a, push: s.config.a2a.push && s.delivery !== undefined },
      publicUrl(s),
      VERSION,
    );
  return defineModule({
    name: 'a2a',
    config: sections,
    requires,
    migrations: new URL('./migrations/', import.meta.url),
    routes(app, s) {
      a2aRoutes(app, s, {
        handler: () => handler?.(),
        card: () => cardFor(s),
        maxBytes: () => s.config.a2a.max_message_bytes,
      });
      app.get(JWKS_PATH, async (c) => {
        if (!keys) throw new AppError('not_ready', 'the a2a module has not started');
        return c.json(await keys.jwks());
      });
    },
    async start(s) {
      const guard = liveEgress(s, opts.resolve ? { resolve: opts.resolve } : {});
      egress = guard;
      keys = new SigningKeys({
        db: s.db,
        vault: s.vault,
        tenantId: s.config.tenant.id,
        now: s.now,
        issuer: () => publicUrl(s),
      });
      await keys.current();
      prepared = new PreparedPushes({ db: s.db, vault: s.vault, keys, now: s.now });
      s.delivery?.addSender?.(pushSender({ db: s.db, vault: s.vault, keys, prepared }));
      const store = new A2ATaskStore({ db: s.db, now: s.now });
      const pushStore = new A2APushStore({
        db: s.db,
        now: s.now,
        vault: s.vault,
        tenantId: s.config.tenant.id,
        tasks: store,
        check: (config) => checkPushConfig(config, guard),
      });
      const skills = () => s.config.a2a.skills;
      const cancelers = new Map<string, Principal>();
      // handler.ts and the SDK's server side load with the first request; the executor runs only under it.
      let loaded: typeof import('./handler.js') | undefined;
      const delivery = s.delivery;
      const end = (taskId: string, e: OwnEnd) =>
        recordEnd(
          {
            db: s.db,
            log: s.log,
            emit: (input, db) => s.emit(input, db),
            updates,
            ...(delivery
              ? {
                  pushed: (tx: Db, row: q.A2ATaskRow, update: Update, event: Envelope) =>
                    enqueuePushes(tx, delivery, row.id, update, event, prepared),
                }
              : {}),
            now: s.now,
          },
          taskId,
          e,
        );
      // Inline push configs between the handler's check and the executor's transaction (milliseconds).
      const inline = new Map<string, { at: number; checked: CheckedPushConfig }>();
      const pushOn = () => s.config.a2a.push && delivery !== undefined;
      const executor = new SkillExecutor({
        end,
        takeInlinePush: (key) => {
          const kept = inline.get(key);
          if (!kept) return undefined;
          inline.delete(key);
          return (tx, taskId) => pushStore.write(tx, taskId, kept.checked);
        },
        db: s.db,
        vault: s.vault,
        tenantId: s.config.tenant.id,
        tasks: () => s.tasks,
        store,
        updates,
        emit: (input, db) => s.emit(input, db),
        skill: (id) => {
          const found = skills().find((k) => k.id === id);
          if (!found) throw new AppError('not_found', `no skill ${id}`);
          return found;
        },
        skillOf: (request) => (loaded as typeof import('./handler.js')).skillOf(skills(), request),
        cancelers,
        loop: () => loopLimits(s.config),
        ...(delivery
          ? {
              pushed: (tx, taskId, update, event) =>
                enqueuePushes(tx, delivery, taskId, update, event, prepared),
            }
          : {}),
        started: (tx, taskId, event) =>
          startedInLaunch(
            {
              updates,
              now: s.now,
              startsHere,
              ...(delivery
                ? { changed: (t, row, update, e) => enqueuePushes(t, delivery, row.id, update, e, prepared) }
                : {}),
            },
            tx,
            taskId,
            event,
          ),
        now: s.now,
      });
      const build = async () => {
        const [{ server }, h] = await Promise.all([loadServerSdk(), import('./handler.js')]);
        loaded = h;
        // One bus per task whoever asks: the task store has already decided who may see the task.
        const buses = new server.DefaultExecutionEventBusManager(() => 'all');
        return new h.SwitchboardRequestHandler(
          {
            skills,
            cancelers,
            load: (id, ctx) => store.load(id, ctx),
            claimInput: async (id) => {
              const claim = randomUUID();
              const now = s.now();
              const won = await s.db.query(q.claimInput(id, claim, now, now - INPUT_CLAIM_STALE_MS));
              return won.length > 0 ? claim : undefined;
            },
            releaseInput: async (id, claim) => {
              await s.db.query(q.releaseInput(id, claim));
            },
            inlinePush: async (key, config, ctx) => {
              if (!pushOn()) return;
              const checked = await pushStore.prepare(config, ctx);
              const now = s.now();
              // A message whose executor never ran (it failed first) leaves its entry: dropped later.
              for (const [k, v] of inline) if (v.at < now - INLINE_PUSH_TTL_MS) inline.delete(k);
              inline.set(key, { at: now, checked });
            },
            cancelDetached: async (taskId, by) => {
              if (buses.getByTaskId(taskId)) return;
              await cancelSwitchboardTask(s.db, s.tasks, taskId, by, end, true);
              // The SDK answers from the stored task, and only the state machine ends one (change.ts):
              // wait for the end this cancel causes (or the one that overtook it) to be recorded.
              await endRecorded(s.db, updates, taskId, CANCEL_RECORD_WAIT_MS);
            },
          },
          cardFor(s),
          store,
          executor,
          buses,
          pushStore,
          pushesLeaveFromTheLog,
        );
      };
      let building: Promise<SwitchboardRequestHandler> | undefined;
      handler = () => {
        building ??= build().catch((err: unknown) => {
          building = undefined; // the next request tries again
          throw err;
        });
        return building;
      };
    },
    subscribers(s) {
      const delivery = s.delivery;
      return [
        taskEventSubscriber({
          db: s.db,
          updates,
          now: s.now,
          startsHere,
          ...(delivery
            ? {
                changed: (tx, row, update, event) =>
                  enqueuePushes(tx, delivery, row.id, update, event, prepared),
              }
            : {}),
          ...(s.approvals ? { approval: (id: string) => s.approvals!.get(id) } : {}),
        }),
      ];
    },
    async stop() {
      updates.closeAll();
      await egress?.close();
      handler = undefined;
      keys = undefined;
      prepared = undefined;
    },
  });
}
