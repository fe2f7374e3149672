import { deliveryPlanDigest, type EffectReceipt, effectKey, type PrepareEffect } from '../../effects/port.js';
import type { Finished } from './settle.js';
import type * as q from './sql.js';

/**
 * A delivery as an effect (src/effects): one event to one destination, no capability (the mouth's
 * governance, not the gate, lets a message out), so its idempotency key is the same for every attempt
 * and replay of the row. An A2A push is a delivery to an `a2a-push:` destination.
 */
export function deliveryEffect(
  row: Pick<q.DeliveryRow, 'id' | 'event_id' | 'destination' | 'correlation_id'>,
): PrepareEffect {
  return {
    kind: row.destination.startsWith('a2a-push:') ? 'a2a' : 'delivery',
    ref: row.id,
    target: row.destination,
    plan_digest: deliveryPlanDigest(row.event_id, row.destination),
    capability_id: null,
    correlation_id: row.correlation_id,
    causation_id: row.event_id,
  };
}

export function deliveryKey(row: Pick<q.DeliveryRow, 'event_id' | 'destination'>): string {
  return effectKey(deliveryPlanDigest(row.event_id, row.destination), null);
}

/**
 * The receipt a finished attempt gives, for the row's next status: delivered (`done`, the provider's
 * message id), dead (`failed`), or sent with no answer (`unknown`, the reconciler's). An attempt that
 * will be retried gives none yet.
 */
export function receiptOf(
  f: Pick<Finished, 'row' | 'result' | 'providerId' | 'outcome'>,
  status: q.DeliveryStatus,
): { key: string; receipt: EffectReceipt } | undefined {
  const key = deliveryKey(f.row);
  const detail = f.result.status !== undefined ? `HTTP ${f.result.status}` : (f.result.error ?? null);
  const answer = f.result.body ?? null;
  switch (status) {
    case 'succeeded':
      return { key, receipt: { status: 'done', provider_id: f.providerId ?? null, answer, detail } };
    case 'dead':
      return {
        key,
        receipt: { status: 'failed', answer, detail: f.outcome.kind === 'dead' ? f.outcome.reason : detail },
      };
    case 'reconcile':
      return { key, receipt: { status: 'unknown', answer, detail } };
    default:
      return undefined;
  }
}
