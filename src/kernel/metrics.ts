import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry per server instance (tests run several in one process). Modules register their own
 * metrics on `registry`; the names below are the ones every module shares.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  readonly eventsAppended: Counter<'type'>;
  readonly outboxDepth: Gauge;
  private readonly sources: { store?: () => StoreCounts | undefined; relay?: () => RelayCounts } = {};

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false)
      collectDefaultMetrics({ register: this.registry, prefix: 'switchboard_' });
    this.httpRequests = new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'HTTP request duration by route template',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [this.registry],
    });
    this.eventsAppended = new Counter({
      name: 'switchboard_events_appended_total',
      help: 'Events appended to the log, by type',
      labelNames: ['type'],
      registers: [this.registry],
    });
    this.outboxDepth = new Gauge({
      name: 'switchboard_outbox_pending',
      help: 'Outbox rows not yet relayed',
      registers: [this.registry],
    });
    // Counters kept by the store and the relay themselves, read when /metrics is scraped: the hot path
    // pays nothing for them.
    const counter = (name: string, help: string, read: () => number | undefined) =>
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          const v = read();
          this.reset();
          if (v !== undefined) this.inc(v);
        },
      });
    const store = (k: keyof StoreCounts) => () => this.sources.store?.()?.[k];
    const relay = (k: keyof RelayCounts) => () => this.sources.relay?.()[k];
    counter(
      'switchboard_store_commits_total',
      'Durable commits (one SQLite commit carries every transaction that queued for it)',
      store('commits'),
    );
    counter(
      'switchboard_store_transactions_total',
      'Transactions committed (a lone write counts as one)',
      store('transactions'),
    );
    counter(
      'switchboard_store_statements_total',
      'Statements run through the store, reads included',
      store('statements'),
    );
    counter('switchboard_relay_claims_total', 'Outbox claim transactions the relay ran', relay('claims'));
    counter('switchboard_relay_claimed_rows_total', 'Outbox rows the relay claimed', relay('claimedRows'));
    counter(
      'switchboard_relay_handoffs_total',
      'Events handed to subscribers in-process right after their commit',
      relay('handoffs'),
    );
    counter(
      'switchboard_relay_acks_total',
      'Acknowledgement statements (batched outbox deletes) the relay ran',
      relay('acks'),
    );
    counter(
      'switchboard_relay_acked_rows_total',
      'Outbox rows the relay acknowledged (deleted)',
      relay('ackedRows'),
    );
  }

  /** Where the store and relay counters are read from (set once the services exist). */
  watch(sources: { store?: () => StoreCounts | undefined; relay?: () => RelayCounts }): void {
    Object.assign(this.sources, sources);
  }
}

/** The store's counters, as `Db.stats()` returns them. */
export interface StoreCounts {
  commits: number;
  transactions: number;
  statements: number;
}

/** The relay's counters, as `Relay.stats()` returns them. */
export interface RelayCounts {
  claims: number;
  claimedRows: number;
  handoffs: number;
  acks: number;
  ackedRows: number;
}
