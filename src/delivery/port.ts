import { port } from '../kernel/port.js';
import type { Outbound } from '../notify/port.js';

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
}

/** The delivery engine (src/delivery/module.ts provides it, and notify's `outboundPort` with it). */
export const deliveryPort = port<DeliveryPort>('delivery');
