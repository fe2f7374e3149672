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
  }
}
