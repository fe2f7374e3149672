import { blockedTarget } from '../../channels/index.js';
import { rememberTrace } from '../../trace/span.js';
import type { EgressPolicy } from '../../egress/index.js';
import type { Message } from '../../notify/port.js';
import { type EnvelopeInput, newId } from '../../envelope/index.js';
import { AppError } from '../../errors/index.js';
import type { EventLog } from '../../log/log.js';
import type { BreakerState } from '../breaker.js';
import type { ChannelConfig, DeliveryPort, DynamicSender, EndpointView } from '../port.js';
import type { Db } from '../../store/port.js';
import type { ChannelEntry } from './engine.js';
import { credentialFingerprint, restoredEvent, restoreRoute } from './revoked.js';
import { firstAttemptAt, type RetryPolicy } from '../retry.js';
import { type EndpointPolicy, initialEndpoint } from './endpoint.js';
import { deliveryEvent } from '../events.js';
import { errorOf, settle } from './settle.js';
import { deliveryEffect, receiptOf } from './effects.js';
import type { EffectsPort } from '../../effects/port.js';
import * as q from './sql.js';

/**
 * What other modules call: `enqueue` writes a delivery in the caller's transaction (so the event
 * that causes a notification and its delivery commit together); `list` and `replay` serve the admin
 * API and `switchboard dlq`.
 */

export interface EnqueueInput {
  /** The event that causes this delivery: attempts are caused by it; it is also the `webhook-id`. */
  eventId: string;
  /** A `channels.<name>` of the current config. */
  destination: string;
  /** A `Message` (`src/channels/channel.ts`); checked here, rendered at each attempt. */
  message: unknown;
  /** `high`: the priority lane — claimed first, retried until delivered. */
  priority?: 'normal' | 'high';
  /** Defaults to the event id (the delivery's events start their own chain). */
  correlationId?: string;
}

export interface Enqueued {
  id: string;
  /** False when this (event, destination) already had a delivery: a redelivered outbox row. */
  created: boolean;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  /** The chain its attempt events are in (the causing event's id unless the caller named one). */
  correlation_id: string;
  destination: string;
  channel_type: string;
  status: q.DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  last_status: number | null;
  last_error: string | null;
  last_response: string | null;
  payload_ref: string | null;
  created_at: string;
  updated_at: string;
}

export interface ListFilter {
  status?: q.DeliveryStatus;
  destination?: string;
  limit?: number;
  /** Newest first (the console); the admin API and `dlq list` read oldest first. */
  newestFirst?: boolean;
  ids?: string[];
}

export interface ReplayFilter {
  ids?: string[];
  destination?: string;
  /** Epoch ms, inclusive: deliveries created at or after. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
}

export interface ReplayOutcome {
  replayed: string[];
  refused: { id: string; reason: string }[];
}

/** A replay touches at most this many rows per call; a larger DLQ is replayed in pages. */
export const MAX_REPLAY = 1000;
export const MAX_LIST = 1000;

/** Implements the `DeliveryPort` (src/delivery/port.ts; notify's `Outbound`), and the admin API's calls. */
export interface DeliveryService extends DeliveryPort {
  enqueue(tx: Db, input: EnqueueInput): Promise<Enqueued>;
  enqueueNow(tx: Db, input: EnqueueInput): Promise<Enqueued>;
  list(filter?: ListFilter): Promise<DeliveryView[]>;
  replay(filter: ReplayFilter): Promise<ReplayOutcome>;
  endpoints(): Promise<EndpointView[]>;
  channelList(): { name: string; type: string }[];
  /** Each configured channel's credential state: `revoked` (with why and since) or `ok` (revoked.ts). */
  channelHealth(): Promise<ChannelHealth[]>;
  /**
   * Lifts the marks of channels whose credential changed since they were refused (at start and after a
   * config reload; the engine also checks at each claim). Returns the channels restored.
   */
  recheckRevoked(): Promise<string[]>;
  /** Lifts a channel's `revoked` mark by hand; false when it was not revoked. */
  restoreChannel(name: string, admin: string): Promise<boolean>;
}

import type { ChannelHealth } from '../port.js';
export type { ChannelHealth };

export interface ServiceDeps {
  db: Db;
  log: EventLog;
  channels: () => Record<string, ChannelEntry>;
  now: () => number;
  /** Called after a write that makes rows due (the engine's wake). */
  wake?: () => void;
  onAppended?: (types: string[]) => void;
  endpointPolicy: EndpointPolicy;
  /** Entry 0 of the schedule delays a new delivery's first attempt ("immediately" by default). */
  retry?: RetryPolicy;
  /**
   * `egress.allow`, compiled, and where `*_env` URLs are read: with both, a delivery whose channel URL
   * the guard refuses without a lookup is recorded `dead` / blocked at enqueue, never queued.
   */
  policy?: EgressPolicy;
  secret?: (env: string) => string | undefined;
  /** The sender of a destination no channel names (`<type>:<id>`, `DeliveryPort.addSender`). */
  dynamic?: (destination: string) => DynamicSender | undefined;
  /** The effect ledger, when the effects module runs: each delivery is prepared in the enqueue's transaction. */
  effects?: () => EffectsPort | undefined;
  /** The engine's send at enqueue (`enqueueNow`): its admission in the transaction, its send after it. */
  immediate?: {
    admitNow(
      tx: Db,
      destination: string,
    ): Promise<{ leaseUntil: number; admitted: () => Promise<void> } | undefined>;
    sendLeased(row: q.DeliveryRow): void;
  };
}

export function view(r: q.DeliveryRow): DeliveryView {
  return {
    id: r.id,
    event_id: r.event_id,
    correlation_id: r.correlation_id,
    destination: r.destination,
    channel_type: r.channel_type,
    status: r.status,
    attempts: Number(r.attempts),
    next_attempt_at: new Date(Number(r.next_attempt_at)).toISOString(),
    last_status: r.last_status === null ? null : Number(r.last_status),
    last_error: r.last_error,
    last_response: r.last_response,
    payload_ref: r.payload_ref,
    created_at: new Date(Number(r.created_at)).toISOString(),
    updated_at: new Date(Number(r.updated_at)).toISOString(),
  };
}

export function createDeliveryService(d: ServiceDeps): DeliveryService {
  async function enqueue(tx: Db, input: EnqueueInput, sendNow = false): Promise<Enqueued> {
    const configured = d.channels()[input.destination];
    const sender = configured ? undefined : d.dynamic?.(input.destination);
    const entry = configured ?? (sender ? { type: sender.type } : undefined);
    if (!entry) throw new AppError('not_found', `no channel named ${input.destination} is configured`);
    const m = input.message as Partial<Message> | null;
    // A dynamic sender's payload is its own shape; like a Message it carries the event id.
    const isMessage = typeof m?.title === 'string' && typeof m?.kind === 'string';
    if (typeof m !== 'object' || m === null || (!sender && !isMessage))
      throw new AppError('bad_request', 'the message is not a channel Message');
    if (m.eventId !== input.eventId)
      throw new AppError('bad_request', 'the message eventId must be the delivery event id');
    const now = d.now();
    const id = newId('delivery', now);
    // Its attempts, later and in a worker, continue the trace that queued it (in this process).
    rememberTrace(id);
    // A dynamic destination's URL is the caller's to check (when it is made, and at connect time).
    const refused =
      d.policy && configured ? blockedTarget(configured, d.secret ?? (() => undefined), d.policy) : undefined;
    const row: q.DeliveryRow = {
      id,
      event_id: input.eventId,
      correlation_id: input.correlationId ?? input.eventId,
      destination: input.destination,
      channel_type: entry.type,
      message: JSON.stringify(input.message),
      payload_ref: null,
      status: 'pending',
      priority: input.priority === 'high' ? 1 : 0,
      attempts: 0,
      next_attempt_at: d.retry ? firstAttemptAt(d.retry, now) : now,
      lease_until: null,
      last_status: null,
      last_error: null,
      last_response: null,
      created_at: now,
      updated_at: now,
    };
    // A URL the guard refuses is refused under this config whatever the lane: dead at once, with the
    // `blocked` event a connect-time refusal writes, instead of a row the priority lane retries forever.
    const blocked = refused && {
      reason: refused.blocked.reason,
      detail: `channels.${input.destination}.${refused.target.key}${refused.target.env ? ` ($${refused.target.env})` : ''}: ${refused.blocked.detail}`,
    };
    const finished = blocked && {
      row,
      attempt: 0,
      result: { sent: false, durationMs: 0, error: 'blocked' as const, blocked },
      outcome: { kind: 'dead' as const, reason: `blocked: ${blocked.reason}` },
    };
    // Sent at once: admitted now and leased as a claim leases, when its first attempt is due now.
    const leased =
      sendNow && !finished && row.next_attempt_at <= now
        ? await d.immediate?.admitNow(tx, row.destination)
        : undefined;
    if (leased) {
      row.status = 'claimed';
      row.lease_until = leased.leaseUntil;
    }
    const rows = await tx.query<{ id: string }>(
      q.insertDelivery({
        id,
        eventId: row.event_id,
        correlationId: row.correlation_id,
        destination: row.destination,
        channelType: row.channel_type,
        message: row.message,
        payloadRef: null,
        priority: row.priority,
        nextAttemptAt: row.next_attempt_at,
        now,
        ...(finished ? { status: 'dead' as const, lastError: errorOf(finished.outcome) } : {}),
        ...(leased ? { status: 'claimed' as const, leaseUntil: leased.leaseUntil } : {}),
      }),
    );
    const effects = rows[0] ? d.effects?.() : undefined;
    if (effects) await effects.prepared(deliveryEffect(row), tx);
    if (rows[0] && finished) {
      await d.log.appendMany([settle(finished).event], tx);
      const receipt = effects && receiptOf(finished, 'dead');
      if (effects && receipt) await effects.receipted(receipt.key, receipt.receipt, tx);
      tx.afterCommit(() => d.onAppended?.(['integration.delivery.blocked']));
      return { id, created: true };
    }
    if (rows[0] && leased) {
      await leased.admitted();
      tx.afterCommit(() => d.immediate?.sendLeased(row));
      return { id, created: true };
    }
    if (rows[0]) {
      // Wake the engine once the caller's transaction has committed: earlier, it would find nothing.
      tx.afterCommit(() => d.wake?.());
      return { id, created: true };
    }
    const existing = await tx.query<{ id: string }>(q.deliveryIdFor(input.eventId, input.destination));
    return { id: existing[0]?.id ?? id, created: false };
  }

  return {
    enqueue: (tx, input) => enqueue(tx, input),
    /**
     * `enqueue`, and the row sent by this process as soon as the caller's transaction commits, instead
     * of after a claim in a commit of its own (one commit less before the send). The durable row stays
     * the crash path: it is written `claimed` with a claim's lease (no claimer takes it while the send
     * is in flight), so a crash before the send leaves it to the lease sweep and the normal claim. A
     * row that cannot go at once (a first attempt the schedule delays, a destination that defers or
     * refuses it, a channel with a revocation mark, the engine stopped) is queued as `enqueue` queues it.
     */
    enqueueNow: (tx, input) => enqueue(tx, input, true),

    channel: (name) => d.channels()[name] as ChannelConfig | undefined,
    channelList: () =>
      Object.entries(d.channels())
        .map(([name, e]) => ({ name, type: e.type }))
        .sort((a, b) => a.name.localeCompare(b.name)),

    async channelHealth() {
      const marks = new Map(
        (await d.db.query<q.ChannelCredentialRow>(q.selectRevokedChannels())).map((m) => [m.destination, m]),
      );
      return Object.entries(d.channels())
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, e]): ChannelHealth => {
          const m = marks.get(name);
          return m
            ? {
                name,
                type: e.type,
                status: 'revoked',
                reason: m.reason,
                since: new Date(Number(m.since)).toISOString(),
                fix: `replace the credential in channels.${name} (restart or reload), or ${restoreRoute(name)}`,
              }
            : { name, type: e.type, status: 'ok' };
        });
    },

    async recheckRevoked() {
      const channels = d.channels();
      const secret = d.secret ?? (() => undefined);
      const out: string[] = [];
      await d.db.tx(async (tx) => {
        const marks = await tx.query<q.ChannelCredentialRow>(q.selectRevokedChannels());
        const inputs: EnvelopeInput[] = [];
        for (const m of marks) {
          const entry = channels[m.destination];
          if (!entry || credentialFingerprint(entry, secret) === m.fingerprint) continue;
          if ((await tx.query(q.clearChannelRevoked(m.destination))).length === 0) continue;
          inputs.push(restoredEvent(m.destination, m.since, 'credential_changed'));
          out.push(m.destination);
        }
        if (inputs.length > 0) await d.log.appendMany(inputs, tx);
      });
      if (out.length > 0) d.onAppended?.(out.map(() => 'integration.credential.restored'));
      return out;
    },

    async restoreChannel(name, admin) {
      const restored = await d.db.tx(async (tx) => {
        const [row] = await tx.query<{ since: number | string }>(q.clearChannelRevoked(name));
        if (!row) return false;
        await d.log.appendMany([restoredEvent(name, row.since, { admin })], tx);
        return true;
      });
      if (restored) d.onAppended?.(['integration.credential.restored']);
      return restored;
    },
    async list(filter = {}) {
      const limit = Math.min(Math.max(1, filter.limit ?? 100), MAX_LIST);
      const rows = await d.db.query<q.DeliveryRow>(
        q.selectDeliveries({
          limit,
          ...(filter.status ? { status: filter.status } : {}),
          ...(filter.destination ? { destination: filter.destination } : {}),
          ...(filter.newestFirst ? { newestFirst: true } : {}),
          ...(filter.ids ? { ids: filter.ids } : {}),
        }),
      );
      return rows.map(view);
    },

    async endpoints() {
      const rows = await d.db.query<q.EndpointRow>(q.listEndpoints());
      return rows.map((r) => {
        const b = JSON.parse(r.breaker) as BreakerState;
        return {
          destination: r.destination,
          breaker: b.state,
          opens: b.opens,
          open_until: b.state === 'open' ? new Date(b.until).toISOString() : null,
          disabled: Number(r.disabled) === 1,
          updated_at: new Date(Number(r.updated_at)).toISOString(),
        };
      });
    },

    async replay(filter) {
      const channels = d.channels();
      const out: ReplayOutcome = { replayed: [], refused: [] };
      const types: string[] = [];
      await d.db.tx(async (tx) => {
        const rows = await tx.query<q.DeliveryRow>(
          q.selectDeliveries(
            {
              limit: MAX_REPLAY,
              ...(filter.ids ? { ids: filter.ids } : {}),
              ...(filter.destination ? { destination: filter.destination } : {}),
              ...(filter.from !== undefined ? { from: filter.from } : {}),
              ...(filter.to !== undefined ? { to: filter.to } : {}),
            },
            filter.ids ? undefined : ['dead', 'reconcile'],
          ),
        );
        const found = new Set(rows.map((r) => r.id));
        for (const id of filter.ids ?? []) {
          if (!found.has(id)) out.refused.push({ id, reason: 'no such delivery' });
        }
        const inputs: EnvelopeInput[] = [];
        const now = d.now();
        for (const r of rows) {
          if (r.status !== 'dead' && r.status !== 'reconcile') {
            out.refused.push({ id: r.id, reason: `status is ${r.status}; only dead and reconcile replay` });
            continue;
          }
          const sender = channels[r.destination] ? undefined : d.dynamic?.(r.destination);
          const entry = channels[r.destination] ?? (sender ? { type: sender.type } : undefined);
          if (!entry) {
            out.refused.push({
              id: r.id,
              reason: `channel ${r.destination} is no longer configured; add it back or leave this delivery dead`,
            });
            continue;
          }
          const done = await tx.query(q.replayDelivery(r.id, entry.type, now));
          if (done.length === 0) continue;
          out.replayed.push(r.id);
          inputs.push(
            deliveryEvent('integration.delivery.replayed', r, entry.type, {
              previous_status: r.status,
              previous_attempts: Number(r.attempts),
            }),
          );
        }
        // A replay is a person saying the endpoint is worth another try: a disabled one starts clean.
        for (const dest of new Set(
          rows.filter((r) => out.replayed.includes(r.id)).map((r) => r.destination),
        )) {
          const ep = await tx.query<q.EndpointRow>(q.selectEndpoint(tx.dialect, dest));
          if (!ep[0] || Number(ep[0].disabled) !== 1) continue;
          const fresh = initialEndpoint(now, d.endpointPolicy);
          await tx.query(
            q.upsertEndpoint({
              destination: dest,
              breaker: JSON.stringify(fresh.breaker),
              bucket: JSON.stringify(fresh.bucket),
              disabled: false,
              now,
            }),
          );
          inputs.push({
            type: 'integration.endpoint.enabled',
            redacted_summary: { destination: dest, reason: 'replay' },
          });
        }
        if (inputs.length > 0) await d.log.appendMany(inputs, tx);
        for (const i of inputs) types.push(i.type);
      });
      if (types.length > 0) {
        d.onAppended?.(types);
        d.wake?.();
      }
      return out;
    },
  };
}
