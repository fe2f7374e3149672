import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Db } from '../../store/port.js';
import { countByStatus } from './sql.js';

/** The delivery engine's metrics, registered once per registry (tests run several servers). */
export interface DeliveryMetrics {
  outcomes: Counter<'destination' | 'outcome'>;
  latency: Histogram<'destination'>;
  breaker: Gauge<'destination'>;
}

const byRegistry = new WeakMap<Registry, DeliveryMetrics>();

/**
 * Queue depth is read from the store at scrape time, so it is right for every replica's rows, not
 * just this process's.
 */
export function deliveryMetrics(registry: Registry, db: () => Db | undefined): DeliveryMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const m: DeliveryMetrics = {
    outcomes: new Counter({
      name: 'switchboard_deliveries_total',
      help: 'Delivery attempts by destination and outcome (ok, retry, dead, unknown, reconcile, deferred)',
      labelNames: ['destination', 'outcome'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'switchboard_delivery_attempt_seconds',
      help: 'Duration of one delivery attempt, by destination',
      labelNames: ['destination'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    breaker: new Gauge({
      name: 'switchboard_delivery_breaker_state',
      help: 'Circuit breaker per destination: 0 closed, 1 half-open, 2 open, 3 disabled',
      labelNames: ['destination'],
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'switchboard_delivery_queue',
    help: 'Deliveries by status (pending, claimed, unknown, reconcile, dead, succeeded)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const port = db();
      if (!port) return;
      this.reset();
      const rows = await port.query<{ status: string; n: number }>(countByStatus());
      for (const r of rows) this.set({ status: r.status }, Number(r.n));
    },
  });
  byRegistry.set(registry, m);
  return m;
}
