import type { Registry } from 'prom-client';
import type { ApprovalService } from '../approvals/port.js';

/**
 * Metrics at a glance: the few figures an operator watches, sampled in this process every
 * `GLANCE_SAMPLE_MS` and kept for `GLANCE_KEPT` samples (half an hour). Counters and gauges come from
 * the metrics registry (what `/metrics` exposes), approvals from the approvals port: never another
 * module's tables. The rates are this process's (like `/metrics`); the DLQ size and the approvals are
 * the store's, so every replica shows the same.
 */
export const GLANCE_SAMPLE_MS = 10_000;
export const GLANCE_KEPT = 180;
/** Decided approvals read for the median time to a decision. */
const DECIDED_READ = 100;
const PENDING_COUNTED = 500;

/** The gate's decision events, by what a person calls the outcome (record.ts names them). */
const DECISION_TYPES: Record<string, 'allowed' | 'denied' | 'held'> = {
  'agent.tool.authorized': 'allowed',
  'agent.tool.denied': 'denied',
  'agent.tool.deferred': 'held',
};
const WEBHOOK_TYPES: Record<string, 'accepted' | 'rejected'> = {
  'integration.webhook.accepted': 'accepted',
  'integration.webhook.rejected': 'rejected',
};
/** Delivery attempt outcomes that are not a success (`switchboard_deliveries_total`). */
const FAILING_OUTCOMES = new Set(['retry', 'dead', 'unknown', 'reconcile']);

/** The running totals read at one instant; rates are the differences between two of these. */
interface Reading {
  at: number;
  decisions: Record<'allowed' | 'denied' | 'held', number>;
  webhooks: Record<'accepted' | 'rejected', number>;
  failing: number;
  dlq: number | null;
  pending: number | null;
  medianDecisionS: number | null;
}

/** The series the charts draw, aligned on `t` (seconds since the epoch); null where unknown. */
export interface GlanceSeries {
  sample_seconds: number;
  t: number[];
  allowed: (number | null)[];
  denied: (number | null)[];
  held: (number | null)[];
  pending: (number | null)[];
  median_decision_s: (number | null)[];
  failing_per_min: (number | null)[];
  dlq: (number | null)[];
  accepted_per_min: (number | null)[];
  rejected_per_min: (number | null)[];
}

export type GlanceKey = Exclude<keyof GlanceSeries, 't' | 'sample_seconds'>;

/** Sums a metric's values by one label, keeping the label values `pick` maps. */
async function sumBy<K extends string>(
  registry: Registry,
  name: string,
  label: string,
  pick: (value: string) => K | undefined,
): Promise<Map<K, number>> {
  const out = new Map<K, number>();
  const metric = registry.getSingleMetric(name);
  if (!metric) return out;
  for (const v of (await metric.get()).values) {
    const key = pick(String(v.labels[label] ?? ''));
    if (key !== undefined) out.set(key, (out.get(key) ?? 0) + v.value);
  }
  return out;
}

/** The median of the time from asking to deciding, in seconds, over `decided`. Pure. */
export function medianSeconds(decided: readonly { created_at: string; decided_at: string | null }[]) {
  const spans = decided
    .filter((a) => a.decided_at)
    .map((a) => (Date.parse(a.decided_at!) - Date.parse(a.created_at)) / 1000)
    .filter((s) => Number.isFinite(s) && s >= 0)
    .sort((a, b) => a - b);
  if (spans.length === 0) return null;
  const mid = Math.floor(spans.length / 2);
  return spans.length % 2 ? spans[mid]! : (spans[mid - 1]! + spans[mid]!) / 2;
}

/** Per `per` milliseconds between two readings; null when there is no earlier one or a counter went back. */
function rate(now: number, before: number | undefined, ms: number, per: number): number | null {
  if (before === undefined || ms <= 0 || now < before) return null;
  const perSecond = (now - before) / (ms / 1000);
  return Math.round(perSecond * per * 1000) / 1000;
}

export class Glance {
  private readonly readings: Reading[] = [];

  constructor(
    private readonly d: {
      registry: Registry;
      approvals: () => ApprovalService | undefined;
      now: () => number;
      kept?: number;
    },
  ) {}

  /** Reads every figure once and keeps the reading (the console's `console.glance` worker). */
  async sample(): Promise<void> {
    const { registry } = this.d;
    const [events, deliveries, queue, approvals] = await Promise.all([
      sumBy(registry, 'switchboard_events_appended_total', 'type', (t) =>
        Object.hasOwn(DECISION_TYPES, t) || Object.hasOwn(WEBHOOK_TYPES, t) ? t : undefined,
      ),
      sumBy(registry, 'switchboard_deliveries_total', 'outcome', (o) =>
        FAILING_OUTCOMES.has(o) ? 'failing' : undefined,
      ),
      registry.getSingleMetric('switchboard_delivery_queue')
        ? sumBy(registry, 'switchboard_delivery_queue', 'status', (s) => (s === 'dead' ? 'dead' : undefined))
        : undefined,
      this.readApprovals(),
    ]);
    const count = (type: string) => events.get(type) ?? 0;
    this.readings.push({
      at: this.d.now(),
      decisions: {
        allowed: count('agent.tool.authorized'),
        denied: count('agent.tool.denied'),
        held: count('agent.tool.deferred'),
      },
      webhooks: {
        accepted: count('integration.webhook.accepted'),
        rejected: count('integration.webhook.rejected'),
      },
      failing: deliveries.get('failing') ?? 0,
      dlq: queue ? (queue.get('dead') ?? 0) : null,
      ...approvals,
    });
    const kept = this.d.kept ?? GLANCE_KEPT;
    if (this.readings.length > kept) this.readings.splice(0, this.readings.length - kept);
  }

  private async readApprovals(): Promise<{ pending: number | null; medianDecisionS: number | null }> {
    const approvals = this.d.approvals();
    if (!approvals?.list) return { pending: null, medianDecisionS: null };
    const [pending, recent] = await Promise.all([
      approvals.list({ state: 'pending', limit: PENDING_COUNTED }),
      approvals.list({ limit: DECIDED_READ }),
    ]);
    return {
      pending: pending.length,
      medianDecisionS: medianSeconds(recent.filter((a) => a.state === 'approved' || a.state === 'rejected')),
    };
  }

  /** The kept readings as chart series: the first point has no rate, so its rates are null. */
  series(): GlanceSeries {
    const out: GlanceSeries = {
      sample_seconds: GLANCE_SAMPLE_MS / 1000,
      t: [],
      allowed: [],
      denied: [],
      held: [],
      pending: [],
      median_decision_s: [],
      failing_per_min: [],
      dlq: [],
      accepted_per_min: [],
      rejected_per_min: [],
    };
    this.readings.forEach((r, i) => {
      const p = this.readings[i - 1];
      const ms = p ? r.at - p.at : 0;
      out.t.push(Math.round(r.at / 1000));
      out.allowed.push(rate(r.decisions.allowed, p?.decisions.allowed, ms, 1));
      out.denied.push(rate(r.decisions.denied, p?.decisions.denied, ms, 1));
      out.held.push(rate(r.decisions.held, p?.decisions.held, ms, 1));
      out.pending.push(r.pending);
      out.median_decision_s.push(r.medianDecisionS === null ? null : Math.round(r.medianDecisionS));
      out.failing_per_min.push(rate(r.failing, p?.failing, ms, 60));
      out.dlq.push(r.dlq);
      out.accepted_per_min.push(rate(r.webhooks.accepted, p?.webhooks.accepted, ms, 60));
      out.rejected_per_min.push(rate(r.webhooks.rejected, p?.webhooks.rejected, ms, 60));
    });
    return out;
  }
}
