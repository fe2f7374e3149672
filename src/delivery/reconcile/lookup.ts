import type { DeliveryRow } from '../engine/sql.js';

/**
 * What the system of record says about a delivery whose outcome is unknown (sent, no answer). Each
 * channel kind that has a way to ask says it here; the reconciler acts on the finding:
 * `found` → succeeded; `absent` → sent again (the provider does not have it); `resend` → sent again
 * because the provider de-duplicates a second send; `unsettled` → a person decides; `retry` → ask later.
 */
export type Finding =
  | { kind: 'found'; providerId?: string }
  | { kind: 'absent' }
  | { kind: 'resend'; why: string }
  | { kind: 'unsettled'; why: string }
  | { kind: 'retry'; error: string };

export interface LookupDeps {
  /** One GET through the egress guard; `undefined` status when nothing answered. */
  get(
    url: string,
    headers: Record<string, string>,
  ): Promise<{ status?: number; body: string; error?: string }>;
  secret(env: string): string | undefined;
  now(): number;
}

/** A lookup for one channel kind: the row and its channel's parsed entry. */
export type Lookup = (
  row: Pick<DeliveryRow, 'event_id' | 'created_at' | 'updated_at'>,
  config: Record<string, unknown>,
  deps: LookupDeps,
) => Promise<Finding>;
