import type { Logger } from 'pino';
import type { Egress } from '../../egress/index.js';
import type { EffectsPort } from '../../effects/port.js';
import type { EnvelopeInput } from '../../envelope/index.js';
import type { EventLog } from '../../log/log.js';
import type { Db } from '../../store/port.js';
import { prefix } from '../../text/index.js';
import { deliveryKey } from '../engine/effects.js';
import type { ChannelEntry } from '../engine/engine.js';
import * as q from '../engine/sql.js';
import type { Finding, Lookup, LookupDeps } from './lookup.js';
import { feishuLookup, telegramLookup } from './others.js';
import { slackLookup } from './slack.js';
import { webhookLookup } from './webhook.js';

/**
 * The reconciler (issue 20 point 2; seed 001: "未知 effect 是否执行 — 停止盲重试，查询下游 receipt 或进入
 * 人工对账"). A chat send whose answer never came is `reconcile`: rather than send it blindly again or
 * leave it to a person, this asks the system of record, per channel kind (`LOOKUPS`), through the egress
 * guard, and settles the row: found → `succeeded`; absent, or safe to send again → `pending`; nothing to
 * ask, or no answer that settles it → left in `reconcile` for a person (the effect `unsettled`, on the
 * takeover queue). A webhook comes here only when its channel names a `status_url` (its receiver
 * then says whether it has the event; without one it de-duplicates and is simply retried, as A2A
 * pushes are). Each verdict is one `integration.delivery.reconciled` event and the effect's receipt,
 * in one transaction.
 */

export const LOOKUPS: Readonly<Record<string, Lookup>> = {
  slack: slackLookup,
  feishu: feishuLookup,
  telegram: telegramLookup,
  webhook: webhookLookup,
};

export const RECONCILE_DEFAULTS = {
  /** A message takes a moment to show in a channel's history; asking at once could miss it. */
  afterMs: 30_000,
  intervalMs: 15_000,
  /** Lookups that could not be answered (provider down, rate limited) before a person is asked. */
  maxChecks: 5,
  firstRetryMs: 30_000,
  batch: 20,
  timeoutMs: 10_000,
} as const;

const ERROR_MAX_CHARS = 300;

export interface ReconcilerOptions {
  db: Db;
  log: EventLog;
  channels: () => Record<string, ChannelEntry>;
  egress: Pick<Egress, 'send'>;
  secret: (env: string) => string | undefined;
  now: () => number;
  effects?: () => EffectsPort | undefined;
  /** After a row went back to `pending`: the engine's wake. */
  wake?: () => void;
  logger?: Logger;
  afterMs?: number;
  maxChecks?: number;
}

export interface ReconcileResult {
  found: number;
  resent: number;
  unsettled: number;
  later: number;
}

export class Reconciler {
  private readonly afterMs: number;
  private readonly maxChecks: number;

  constructor(private readonly o: ReconcilerOptions) {
    this.afterMs = o.afterMs ?? RECONCILE_DEFAULTS.afterMs;
    this.maxChecks = o.maxChecks ?? RECONCILE_DEFAULTS.maxChecks;
  }

  /** One pass over the rows due for a question. */
  async tick(): Promise<ReconcileResult> {
    const now = this.o.now();
    const rows = await this.o.db.query<q.DeliveryRow & { reconcile_checks: number }>(
      q.selectReconcilable(now, now - this.afterMs, this.maxChecks, RECONCILE_DEFAULTS.batch),
    );
    const result: ReconcileResult = { found: 0, resent: 0, unsettled: 0, later: 0 };
    for (const row of rows) {
      const finding = await this.ask(row);
      const outcome = await this.settle(row, finding);
      result[outcome]++;
    }
    if (result.resent > 0) this.o.wake?.();
    return result;
  }

  private async ask(row: q.DeliveryRow): Promise<Finding> {
    const entry = this.o.channels()[row.destination];
    if (!entry) return { kind: 'unsettled', why: `channel ${row.destination} is no longer configured` };
    const lookup = LOOKUPS[entry.type];
    if (!lookup)
      return { kind: 'unsettled', why: `${entry.type}: no way to ask the provider about a message` };
    const deps: LookupDeps = {
      get: async (url, headers) => {
        const r = await this.o.egress.send({
          url,
          headers,
          method: 'GET',
          timeoutMs: RECONCILE_DEFAULTS.timeoutMs,
        });
        if (r.error === 'blocked') return { body: '', error: `blocked: ${r.detail ?? 'refused'}` };
        return r.status === undefined
          ? { body: '', error: r.error ?? 'other' }
          : { status: r.status, body: r.body ?? '' };
      },
      secret: this.o.secret,
      now: this.o.now,
    };
    try {
      return await lookup(row, entry, deps);
    } catch (err) {
      this.o.logger?.warn({ err, delivery_id: row.id }, 'reconcile: the lookup failed');
      return { kind: 'retry', error: 'the lookup failed' };
    }
  }

  private async settle(
    row: q.DeliveryRow & { reconcile_checks: number },
    f: Finding,
  ): Promise<keyof ReconcileResult> {
    const now = this.o.now();
    const checks = Number(row.reconcile_checks) + 1;
    // A lookup that keeps failing becomes a person's after the cap, like an answer that settles nothing.
    const finding: Finding =
      f.kind === 'retry' && checks >= this.maxChecks
        ? { kind: 'unsettled', why: `${f.error} (asked ${checks} times)` }
        : f;
    const outcome: keyof ReconcileResult =
      finding.kind === 'found'
        ? 'found'
        : finding.kind === 'absent' || finding.kind === 'resend'
          ? 'resent'
          : finding.kind === 'unsettled'
            ? 'unsettled'
            : 'later';
    const why =
      finding.kind === 'absent'
        ? 'reconciled: the provider does not have it; sending again'
        : finding.kind === 'resend'
          ? `reconciled: ${finding.why}; sending again`
          : finding.kind === 'unsettled'
            ? `reconcile: ${finding.why}`
            : finding.kind === 'retry'
              ? `reconcile: ${finding.error}`
              : '';
    await this.o.db.tx(async (tx) => {
      const sql =
        finding.kind === 'found'
          ? q.reconcileFound(row.id, now)
          : outcome === 'resent'
            ? q.reconcileResend(row.id, now, prefix(why, ERROR_MAX_CHARS))
            : q.reconcileChecked(
                row.id,
                prefix(why, ERROR_MAX_CHARS),
                finding.kind === 'unsettled'
                  ? null
                  : now + RECONCILE_DEFAULTS.firstRetryMs * 2 ** (checks - 1),
                this.maxChecks,
              );
      const changed = await tx.query(sql);
      if (changed.length === 0) return; // a person replayed it meanwhile
      if (outcome === 'later') return;
      const event: EnvelopeInput = {
        type: 'integration.delivery.reconciled',
        causation_id: row.event_id,
        correlation_id: row.correlation_id,
        subject: { resource_ref: row.id },
        redacted_summary: {
          delivery_id: row.id,
          destination: row.destination,
          channel: row.channel_type,
          outcome: finding.kind === 'resend' ? 'resend' : finding.kind,
          ...(finding.kind === 'found' && finding.providerId ? { provider_id: finding.providerId } : {}),
          ...(why ? { summary: why } : {}),
        },
      };
      await this.o.log.appendMany([event], tx);
      const effects = this.o.effects?.();
      if (effects)
        await effects.receipted(
          deliveryKey(row),
          finding.kind === 'found'
            ? {
                status: 'done',
                provider_id: finding.providerId ?? null,
                detail: 'found by the reconciler',
                reconciled: true,
              }
            : outcome === 'resent'
              ? { status: 'resendable', detail: why, reconciled: true }
              : { status: 'unsettled', detail: why, reconciled: true },
          tx,
        );
    });
    return outcome;
  }
}
