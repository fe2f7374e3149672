import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { A2A_CONTENT_TYPE, sdkRoot } from './wire.js';
import type { SendDeps, SendResult } from '../channels/index.js';
import type { DeliveryPort, DynamicSender } from '../delivery/port.js';
import { type Egress, TargetRefusedError } from '../egress/index.js';
import type { Envelope } from '../envelope/index.js';
import type { Message } from '../notify/port.js';
import type { Vault } from '../log/vault.js';
import type { Db } from '../store/port.js';
import type { Update } from './executor.js';
import type { SigningKeys } from './keys.js';
import { isTerminal } from './states.js';
import * as q from './sql.js';

export const PUSH_TYPE = 'a2a-push';
/** 2 KB: a callback URL longer than this is an attempt to smuggle something, not an address. */
export const MAX_PUSH_URL_CHARS = 2048;
/** What a receiver's header parser would split on: a header value must never carry one. */
const CONTROL = /[\r\n\0]/;

/** What one push delivery row stores: the config it goes to and the exact body, the same on each retry. */
export interface PushPayload {
  eventId: string;
  taskId: string;
  configId: string;
  body: string;
}

function refuse(field: string, why: string): never {
  throw new RequestMalformedError(`${field}: ${why}`);
}

/**
 * The checks a push config passes before it is stored (nothing is stored on a refusal): the URL
 * through the egress guard with its DNS answer (private, loopback unless in `egress.allow`, metadata,
 * plain HTTP, `file:`/`data:`/`gopher:`), at most 2 KB, and no CR/LF in anything sent as a header.
 * The guard checks the address again at connect time, so a name that rebinds later is still refused.
 */
export async function checkPushConfig(
  config: TaskPushNotificationConfig,
  egress: Pick<Egress, 'check'>,
): Promise<void> {
  if (typeof config.url !== 'string' || config.url === '') refuse('url', 'required');
  if (config.url.length > MAX_PUSH_URL_CHARS)
    refuse('url', `${config.url.length} characters; at most ${MAX_PUSH_URL_CHARS}`);
  if (config.token && CONTROL.test(config.token)) refuse('token', 'must not contain CR, LF or NUL');
  const auth = config.authentication;
  if (auth && CONTROL.test(auth.scheme)) refuse('authentication.scheme', 'must not contain CR, LF or NUL');
  if (auth && CONTROL.test(auth.credentials))
    refuse('authentication.credentials', 'must not contain CR, LF or NUL');
  if (auth && !/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*$/.test(auth.scheme))
    refuse('authentication.scheme', 'must be an HTTP auth scheme token such as Bearer or Basic');
  const verdict = await egress.check(config.url);
  if (verdict.kind === 'blocked')
    refuse('url', `refused by the egress guard (${verdict.reason}): ${verdict.detail}`);
}

/** A task's change (status or artifact) as the body of a push: a v1.0 `StreamResponse` in ProtoJSON. */
export async function pushBody(update: Update): Promise<string> {
  return JSON.stringify((await sdkRoot()).StreamResponse.toJSON({ payload: update }));
}

/**
 * The delivery destination of a push: the receiver, `a2a-push:<origin of the callback URL>`. The
 * engine keeps its breaker, rate bucket and metrics per destination, so a receiver that is down
 * trips one breaker for every task pushing to it (not one per config), the endpoint rows and the
 * metric labels grow with receivers rather than tasks, and a claimed batch of pushes to one receiver
 * reads and writes one endpoint row. The payload names the task and config the push is for.
 */
export function pushDestination(url: string): string {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    origin = 'invalid';
  }
  return `${PUSH_TYPE}:${origin}`;
}

/**
 * One delivery per push config of the task, in the transaction that records the change; the task
 * event's id is the delivery's event id, so a redelivered event makes no second row. A terminal push
 * goes in the priority lane (retried until delivered); after it nothing more is pushed. Each is sent
 * by this process right after the commit (`DeliveryPort.enqueueNow`: leased in this transaction, so
 * the first attempt waits for no claim and its commit); the row stays the crash path. `prepared`
 * keeps each config as read here and signs its headers while the COMMIT syncs (`PreparedPushes`).
 */
export async function enqueuePushes(
  tx: Db,
  delivery: DeliveryPort,
  taskId: string,
  update: Update,
  event: Envelope,
  prepared?: PreparedPushes,
): Promise<void> {
  const configs = await tx.query<q.PushConfigRow>(q.selectPushConfigs(taskId));
  if (configs.length === 0) return;
  const body = await pushBody(update);
  for (const c of configs) {
    const payload: PushPayload = { eventId: event.event_id, taskId, configId: c.id, body };
    const enqueue = delivery.enqueueNow ?? delivery.enqueue;
    await enqueue.call(delivery, tx, {
      eventId: event.event_id,
      destination: pushDestination(c.url),
      // Not a channel Message: the delivery engine hands a dynamic sender its payload as stored.
      message: payload as unknown as Message,
      priority: update.$case === 'statusUpdate' && isTerminal(update.value.status?.state) ? 'high' : 'normal',
    });
    prepared?.keep(payload, c);
  }
}

/**
 * How long a push prepared at its enqueue is sent as prepared: the send right after the commit comes
 * within milliseconds; a first attempt later than this (the row waited for the normal claim) reads
 * its config again, so a config deleted meanwhile is not pushed to.
 */
export const PREPARED_FRESH_MS = 1_000;
/** Prepared pushes kept at most; one whose transaction rolled back is never taken, and ages out. */
const PREPARED_MAX = 1_024;

interface Prepared {
  at: number;
  url: string;
  headers: Promise<Record<string, string>>;
}

/**
 * The first attempt of a push without a read or a signature after its commit: the enqueuing
 * transaction has just read the config (`enqueuePushes`), and the JWT is signed on the next turn of
 * the event loop, which comes while the COMMIT's fsync runs (the event loop is idle then). The send
 * right after the commit takes both (`pushSender`); anything else (a retry, a row the normal claim
 * sends, a restart) reads the config and signs as before. A config with `authentication` is not
 * prepared (its credentials are read from the vault at the send). `push.test.ts` verifies the JWT.
 */
export class PreparedPushes {
  private readonly kept = new Map<string, Prepared>();

  constructor(private readonly d: SenderDeps & { now: () => number }) {}

  keep(p: PushPayload, config: q.PushConfigRow): void {
    if (config.auth_scheme) return;
    const now = this.d.now();
    for (const [k, v] of this.kept) {
      if (v.at >= now - PREPARED_FRESH_MS && this.kept.size < PREPARED_MAX) break;
      this.kept.delete(k);
    }
    const headers = new Promise<void>((r) => setImmediate(r)).then(() => pushHeaders(this.d, config, p));
    headers.catch(() => {}); // taken or not, a failed signature is the send's to see (it signs again)
    this.kept.set(preparedKey(p), { at: now, url: config.url, headers });
  }

  /** The push as prepared, once: undefined when none was, or too long ago. */
  take(p: PushPayload): Prepared | undefined {
    const k = preparedKey(p);
    const found = this.kept.get(k);
    if (!found) return undefined;
    this.kept.delete(k);
    return found.at >= this.d.now() - PREPARED_FRESH_MS ? found : undefined;
  }
}

function preparedKey(p: PushPayload): string {
  return `${p.eventId} ${p.taskId} ${p.configId}`;
}

export interface SenderDeps {
  db: Db;
  vault: Vault;
  keys: SigningKeys;
  /** Pushes prepared at their enqueue (`PreparedPushes`); absent, every attempt reads and signs. */
  prepared?: PreparedPushes;
}

/**
 * Sends one push: the stored body to the config's URL through the engine's guarded `post` (no
 * redirects, the address checked at connect time). `Authorization` is the config's own
 * `authentication` when it has one, else a JWT signed for this URL and body; the event id rides as
 * `X-Switchboard-Event-Id` (and `jti`), the config's token as `X-A2A-Notification-Token`.
 */
export function pushSender(d: SenderDeps): DynamicSender {
  return {
    type: PUSH_TYPE,
    async send(raw: unknown, deps: SendDeps): Promise<SendResult> {
      const p = raw as PushPayload;
      const prepared = d.prepared?.take(p);
      let target = prepared
        ? await prepared.headers.then(
            (headers) => ({ url: prepared.url, headers }),
            () => undefined,
          )
        : undefined;
      if (!target) {
        const config = (await d.db.query<q.PushConfigRow>(q.selectPushConfig(p.taskId, p.configId)))[0];
        if (!config) return { kind: 'dead', reason: 'the push config was deleted' };
        target = { url: config.url, headers: await pushHeaders(d, config, p) };
      }
      try {
        const res = await deps.post({ url: target.url, headers: target.headers, body: p.body });
        return res.status >= 200 && res.status < 300
          ? { kind: 'ok' }
          : { kind: 'retry', error: `the receiver answered ${res.status}` };
      } catch (err) {
        if (err instanceof TargetRefusedError) return { kind: 'dead', reason: err.message };
        return {
          kind: 'retry',
          error: `the push was not answered: ${(err as { code?: string }).code ?? 'network error'}`,
        };
      }
    },
  };
}

async function pushHeaders(
  d: SenderDeps,
  config: q.PushConfigRow,
  p: PushPayload,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'content-type': A2A_CONTENT_TYPE,
    'x-switchboard-event-id': p.eventId,
    authorization: await authorization(d, config, p),
  };
  if (config.token) headers['x-a2a-notification-token'] = config.token;
  return headers;
}

async function authorization(d: SenderDeps, config: q.PushConfigRow, p: PushPayload): Promise<string> {
  if (config.auth_scheme) {
    const credentials = config.auth_ref ? ((await d.vault.get(config.auth_ref))?.toString('utf8') ?? '') : '';
    return `${config.auth_scheme} ${credentials}`.trim();
  }
  return `Bearer ${await d.keys.sign({ audience: config.url, eventId: p.eventId, taskId: p.taskId, body: p.body })}`;
}
