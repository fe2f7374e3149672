import { AppError } from '../../errors/index.js';
import { requireRole } from '../../kernel/auth.js';
import type { App, Services } from '../../kernel/module.js';
import * as q from '../sql.js';

/**
 * `GET /v1/ingress/dlq` (admin): deliveries whose admission or launch failed, with why, how often it
 * was tried and the last error. Each is replayable with `POST /v1/ingress/deliveries/:id/replay`.
 */

export type DlqClassification = 'fetch_failed' | 'launch_failed' | 'launch_interrupted' | 'admission_failed';

/** The delivery's `last_error` says which step failed: admission and the launcher write it with a prefix. */
export function classify(lastError: string | null): DlqClassification {
  if (lastError?.startsWith('fetch_failed:')) return 'fetch_failed';
  if (lastError?.startsWith('launch failed:')) return 'launch_failed';
  if (lastError?.startsWith('the gateway stopped while launching')) return 'launch_interrupted';
  return 'admission_failed';
}

export interface DlqEntry {
  source: string;
  delivery_id: string;
  event_id: string;
  event: string | null;
  classification: DlqClassification;
  /** Times the sender's delivery was accepted (first delivery, redeliveries, replays). */
  accepted: number;
  /** Relay attempts at admitting the current event (retried with backoff while it fails). */
  attempts: number;
  last_error: string | null;
  received_at: string;
  failed_at: string | null;
}

/** One page is enough to act on; an operator with more than this has a bigger problem to look at first. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

interface Row {
  source: string;
  delivery_id: string;
  event_id: string;
  event_name: string | null;
  accepted: number;
  last_error: string | null;
  received_at: number;
  processed_at: number | null;
}

/** Failed deliveries from the ingress table; how often the relay tried each event comes from the log. */
export async function listDlq(
  services: Pick<Services, 'db' | 'log'>,
  opts: { source?: string; limit: number },
): Promise<DlqEntry[]> {
  const rows = await services.db.query<Row>(q.selectFailedDeliveries(opts.source ?? '', opts.limit));
  const attempts = await services.log.outboxAttempts([...new Set(rows.map((r) => r.event_id))]);
  return rows.map((r) => ({
    source: r.source,
    delivery_id: r.delivery_id,
    event_id: r.event_id,
    event: r.event_name,
    classification: classify(r.last_error),
    accepted: Number(r.accepted),
    attempts: attempts.get(r.event_id) ?? 0,
    last_error: r.last_error,
    received_at: new Date(Number(r.received_at)).toISOString(),
    failed_at: r.processed_at === null ? null : new Date(Number(r.processed_at)).toISOString(),
  }));
}

export function dlqRoute(app: App, services: Services): void {
  app.get('/v1/ingress/dlq', requireRole(services.keys, 'admin'), async (c) => {
    const limit = c.req.query('limit');
    if (limit !== undefined && (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LIMIT))
      throw new AppError('bad_request', `\`limit\` is a whole number from 1 to ${MAX_LIMIT}`);
    const source = c.req.query('source');
    const entries = await listDlq(services, {
      ...(source ? { source } : {}),
      limit: limit ? Number(limit) : DEFAULT_LIMIT,
    });
    return c.json({ deliveries: entries });
  });
}
