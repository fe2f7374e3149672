import { TargetRefusedError } from '../egress/index.js';
import { type EffectReceipt, type EffectsPort, effectKey } from '../effects/port.js';
import { planDigest } from '../envelope/index.js';
import { AppError } from '../errors/index.js';
import type { LaunchRequest } from '../tasks/port.js';
import { type Poster, classifyHttpStatus, httpBody } from './http.js';
import type { TaskRow } from './sql.js';
import type { StoredAction, TaskStore } from './store.js';

type HttpAction = Extract<LaunchRequest['action'], { type: 'http' }>;
type NotifyAction = Extract<LaunchRequest['action'], { type: 'notify' }>;

/**
 * The plan of an `http` action: its trigger, its URL and the event that caused it (not the body, which
 * holds the task id), so a replayed launch of the same cause is the same plan.
 */
export function httpPlanDigest(req: LaunchRequest, a: HttpAction): string {
  return planDigest({
    tool: 'http',
    action: 'POST',
    resource: req.trigger_id,
    input: { url: a.url, cause: req.cause.event_id },
  });
}

/** A failed POST with no answer: a timeout or reset after the request left may have been acted on. */
const MAYBE_SENT = /timeout|reset/;

/**
 * An `http` action: POST once with the effect's idempotency key (derived from the plan digest,
 * src/effects), so a replayed launch is the same request to the endpoint. What the answer means is
 * `classifyHttpStatus` (docs/tasks.md). With the effects module the POST is an effect: prepared before
 * it goes, its receipt (the status) after; an answer that never came is `unsettled`, for a person.
 * The task has no local process: `boot_id` is cleared once the POST is answered, so restart recovery
 * leaves a task the endpoint accepted alone.
 */
export async function launchHttp(
  store: TaskStore,
  poster: Poster,
  publicUrl: string,
  req: LaunchRequest,
  a: HttpAction,
  id: string,
  effects?: EffectsPort,
): Promise<TaskRow> {
  const body = httpBody(req, a.body_template, { id, switchboard_url: publicUrl });
  if (!body.ok) throw new AppError('validation_failed', `trigger ${req.trigger_id}: ${body.error}`);
  const stored: StoredAction = { type: 'http', url: a.url, header_names: Object.keys(a.headers ?? {}) };
  const row = await store.submit(req, stored, {}, id);
  const plan = httpPlanDigest(req, a);
  const key = effectKey(plan, null);
  const headers = { ...a.headers, 'content-type': 'application/json', 'idempotency-key': key };
  let status: number;
  // Written ahead of the POST, as a spawn is (service.ts): a crash after it means "may have been sent".
  await store.markSpawn(row.id);
  await effects?.prepared({
    kind: 'http',
    ref: row.id,
    target: req.trigger_id,
    plan_digest: plan,
    task_id: row.id,
    correlation_id: req.cause.correlation_id,
    causation_id: req.cause.event_id,
  });
  const receipt = async (r: EffectReceipt) => {
    await effects?.receipted(key, r);
  };
  try {
    status = (await poster({ url: a.url, headers, body: body.body })).status;
  } catch (err) {
    // A target egress refuses is recorded as delivery records one: the reason and `blocked_reason`.
    const blocked = err instanceof TargetRefusedError ? err.blocked : undefined;
    const message = (err as Error).message;
    await receipt(
      !blocked && MAYBE_SENT.test(message)
        ? { status: 'unsettled', detail: message }
        : { status: 'failed', detail: blocked ? `blocked: ${blocked.reason}` : message },
    );
    if (blocked) {
      const reason = `blocked (${blocked.reason}): ${blocked.detail}`;
      return (
        (await store.fail(row.id, ['submitted'], reason, null, { blocked_reason: blocked.reason })) ?? row
      );
    }
    const reason = `the POST to the endpoint failed: ${(err as Error).message}`;
    return (await store.fail(row.id, ['submitted'], reason)) ?? row;
  }
  const outcome = classifyHttpStatus(status);
  await receipt({ status: outcome.kind === 'failed' ? 'failed' : 'done', detail: `HTTP ${status}` });
  if (outcome.kind === 'failed') return (await store.fail(row.id, ['submitted'], outcome.reason)) ?? row;
  const summary = { http_status: status };
  const working = await store.move(
    row.id,
    ['submitted'],
    'working',
    'agent.task.started',
    { boot_id: null },
    summary,
  );
  if (!working) return (await store.row(row.id)) ?? row;
  if (outcome.kind === 'working') return working;
  return (await store.move(row.id, ['working'], 'completed', 'agent.task.completed', {}, summary)) ?? working;
}

/** A `notify` action only tells a person: the task is recorded and done, and the mouth turns its events into a message. */
export async function launchNotify(store: TaskStore, req: LaunchRequest, a: NotifyAction): Promise<TaskRow> {
  const stored: StoredAction = { type: 'notify', channels: a.channels ?? [] };
  const row = await store.submit(req, stored, {});
  await store.markSpawn(row.id);
  const summary = { channels: stored.channels };
  return (
    (await store.move(
      row.id,
      ['submitted'],
      'completed',
      'agent.task.completed',
      { boot_id: null },
      summary,
    )) ?? row
  );
}
