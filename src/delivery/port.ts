import { port } from '../kernel/port.js';
import type { Outbound } from '../notify/port.js';
import type { ChannelKind, SendDeps, SendResult } from '../channels/index.js';
import type { BreakerState } from './breaker.js';
import type { DeliveryView, ListFilter, ReplayFilter, ReplayOutcome } from './engine/service.js';

export type { DeliveryView, ListFilter, ReplayFilter, ReplayOutcome };

/**
 * Where a module's own endpoints are delivered: destinations `<type>:<id>` that no `channels:` entry
 * names (an A2A push config is made by a caller, not configured). Its rows get everything a channel's
 * do — retry schedule, breaker and rate limit per destination, DLQ, replay, attempt events — and it
 * sends the stored payload itself, through the engine's guarded `post`.
 */
export interface DynamicSender {
  /** The destination prefix and the rows' `channel_type`. */
  type: string;
  /** One attempt: the payload as enqueued; never throws for provider or network failures. */
  send(payload: unknown, deps: SendDeps): Promise<SendResult>;
  /** The provider's reading of a non-2xx answer (as a channel kind's `verdict`), preferred over the status. */
  verdict?: ChannelKind<unknown>['verdict'];
}

/** A configured channel as the delivery module knows it: its name, type and entry (secrets still env names). */
export interface ChannelConfig {
  type: string;
  [key: string]: unknown;
}

/**
 * The delivery engine as other modules see it: notify's `Outbound` (enqueue in the caller's
 * transaction), plus the configured channels, for modules that answer a channel's callbacks.
 */
export interface DeliveryPort extends Outbound {
  channel(name: string): ChannelConfig | undefined;
  /** Deliveries by status and destination (`newestFirst` for a person's list; oldest first otherwise). */
  list?(filter?: ListFilter): Promise<DeliveryView[]>;
  /** Dead and reconcile deliveries back to pending, each with its `integration.delivery.replayed` event. */
  replay?(filter: ReplayFilter): Promise<ReplayOutcome>;
  /** The shared per-destination state: breaker and disabled flag (a destination never tried has none). */
  endpoints?(): Promise<EndpointView[]>;
  /** The configured channels by name and type (no URLs, no secrets): the console's "send test" list. */
  channelList?(): { name: string; type: string }[];
  /** Each channel's credential state: `ok`, or `revoked` at the provider with why, since and the fix. */
  channelHealth?(): Promise<ChannelHealth[]>;
  /** Registers a sender for `<type>:<id>` destinations (see `DynamicSender`); a module calls it at start. */
  addSender?(sender: DynamicSender): void;
  /**
   * `enqueue` for a `DynamicSender`'s destination, sent by this process right after the caller's
   * commit instead of after a claim in another commit. The row is written already claimed, with a
   * claim's lease, in the caller's transaction (admitted there against the destination's breaker and
   * rate bucket), so no claimer repeats the send while it is in flight, and a crash before the send
   * leaves the row to the lease sweep and the normal claim. A row that cannot go at once (its first
   * attempt delayed by the schedule, the destination deferring it, the engine not running) is queued
   * as `enqueue` queues it.
   */
  enqueueNow?: Outbound['enqueue'];
}

export interface EndpointView {
  destination: string;
  breaker: BreakerState['state'];
  /** Consecutive opens without a successful probe in between. */
  opens: number;
  /** While open: when the next probe may go (ISO 8601). */
  open_until: string | null;
  disabled: boolean;
  updated_at: string;
}

/** The delivery engine (src/delivery/module.ts provides it, and notify's `outboundPort` with it). */
export const deliveryPort = port<DeliveryPort>('delivery');

/** A channel's credential as the provider last judged it (engine/revoked.ts). */
export type ChannelHealth =
  | { name: string; type: string; status: 'ok' }
  | { name: string; type: string; status: 'revoked'; reason: string; since: string; fix: string };
