import type { EnvelopeInput } from '../../envelope/index.js';
import { prefix } from '../../text/index.js';
import type { Db } from '../../store/port.js';
import { BODY_EXCERPT_CHARS } from '../events.js';
import { receiptOf } from './effects.js';
import type { EngineOptions } from './engine.js';
import { breakerLevel, loadEndpoint, recordGroup, saveEndpoint } from './endpoint.js';
import { credentialFingerprint, revocationOf, revokedEvent } from './revoked.js';
import { errorOf, type Finished, nextAt, settle } from './settle.js';
import * as q from './sql.js';

/** Rows per settle statement (8 parameters each, well under SQLite's bound-parameter limit). */
const FINISH_CHUNK = 200;

/** What a batch's record wrote: its events' types (for the after-commit hooks) and each endpoint's breaker level. */
export interface Recorded {
  types: string[];
  levels: Map<string, number>;
}

/**
 * A batch's outcomes, in the caller's transaction: per destination (sorted, so engines lock endpoints
 * in one order) the endpoint's breaker and bucket, a revoked credential's mark, every row's new state
 * in one statement per chunk, the effect receipts, and every attempt's event.
 */
export async function recordBatch(
  tx: Db,
  batch: readonly Finished[],
  now: number,
  o: Pick<EngineOptions, 'policies' | 'channels' | 'secret' | 'metrics' | 'log' | 'effects'>,
): Promise<Recorded> {
  const types: string[] = [];
  const levels = new Map<string, number>();
  const effects = o.effects?.();
  const inputs: EnvelopeInput[] = [];
  const finished: Parameters<typeof q.finishDeliveries>[0][number][] = [];
  const receipts: NonNullable<ReturnType<typeof receiptOf>>[] = [];
  const byDest = new Map<string, Finished[]>();
  for (const f of batch) byDest.set(f.row.destination, [...(byDest.get(f.row.destination) ?? []), f]);
  for (const dest of [...byDest.keys()].sort()) {
    const group = byDest.get(dest) ?? [];
    const sent = group.filter((f) => f.attempt > Number(f.row.attempts));
    if (sent.length > 0) {
      const state = await loadEndpoint(tx, dest, now, o.policies);
      const { state: next, disabledNow } = recordGroup(
        state,
        sent.map((f) => f.outcome),
        now,
        o.policies,
      );
      await saveEndpoint(tx, dest, next, now);
      levels.set(dest, breakerLevel(next));
      if (disabledNow)
        inputs.push({
          type: 'integration.endpoint.disabled',
          redacted_summary: { destination: dest, breaker: next.breaker.state },
        });
    }
    for (const f of group) {
      const { status, event } = settle(f);
      const revoked =
        f.attempt > Number(f.row.attempts)
          ? revocationOf(f.row.channel_type, f.outcome, f.result)
          : undefined;
      const entry = revoked ? o.channels()[dest] : undefined;
      if (revoked && entry) {
        const marked = await tx.query(
          q.markChannelRevoked({
            destination: dest,
            channelType: f.row.channel_type,
            reason: revoked,
            fingerprint: credentialFingerprint(entry, o.secret),
            since: now,
            eventId: f.row.event_id,
          }),
        );
        if (marked.length > 0)
          inputs.push(
            revokedEvent(dest, f.row.channel_type, revoked, {
              event_id: f.row.event_id,
              correlation_id: f.row.correlation_id,
              delivery_id: f.row.id,
            }),
          );
      }
      finished.push({
        id: f.row.id,
        status,
        attempts: f.attempt,
        nextAttemptAt: nextAt(f.outcome, f.row, now),
        lastStatus: f.result.status ?? null,
        lastError: errorOf(f.outcome),
        lastResponse:
          f.outcome.kind === 'ok' || !f.result.body ? null : prefix(f.result.body, BODY_EXCERPT_CHARS),
      });
      inputs.push(event);
      const receipt = effects && receiptOf(f, status);
      if (receipt) receipts.push(receipt);
      o.metrics?.outcomes.inc({
        destination: dest,
        outcome: status === 'reconcile' ? 'reconcile' : f.outcome.kind,
      });
    }
  }
  // The batch's rows in one statement per chunk, and its receipts in two (issue 13: one settle per pass).
  for (let i = 0; i < finished.length; i += FINISH_CHUNK)
    await tx.query(q.finishDeliveries(finished.slice(i, i + FINISH_CHUNK), now));
  if (effects && receipts.length > 0) {
    if (effects.receiptedMany) await effects.receiptedMany(receipts, tx);
    else for (const r of receipts) await effects.receipted(r.key, r.receipt, tx);
  }
  await o.log.appendMany(inputs, tx);
  for (const i of inputs) types.push(i.type);
  return { types, levels };
}
