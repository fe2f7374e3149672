import { type ClusterService, leaderOnly } from '../cluster/port.js';
import type { Services } from '../kernel/module.js';
import { startWorker, type Worker } from '../kernel/worker.js';
import { purgeDeliveries } from './pipeline/deliveries.js';
import { purgeRevisions } from './sql.js';

/** Hourly: retention is counted in days, so an hour late is noise, and the delete stays small. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * Deletes sealed payloads past their retention, and the processed delivery records as old as them
 * (a redelivery after that is new work again, which is what a sender that old means).
 */
export class RetentionWorker {
  private worker: Worker | undefined;

  constructor(
    private readonly services: Services,
    private readonly retentionMs: () => number,
    /** Only the leader purges; without a cluster this process does. */
    private readonly cluster: () => ClusterService | undefined = () => undefined,
  ) {}

  start(): void {
    this.worker ??= startWorker(
      leaderOnly(this.cluster, {
        name: 'ingress.retention',
        intervalMs: RETENTION_INTERVAL_MS,
        tick: async () => {
          await this.runOnce();
        },
        onError: (err) => this.services.logger.warn({ err }, 'ingress retention failed; retrying next hour'),
      }),
    );
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    this.worker = undefined;
  }

  async runOnce(): Promise<{ payloads: number; deliveries: number }> {
    const payloads = await this.services.vault.purgeExpired();
    const before = this.services.now() - this.retentionMs();
    const deliveries = await purgeDeliveries(this.services.db, before);
    await this.services.db.query(purgeRevisions(before));
    if (payloads + deliveries > 0)
      this.services.logger.info({ payloads, deliveries }, 'ingress retention purged');
    return { payloads, deliveries };
  }
}
