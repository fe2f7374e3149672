import type { Outbound } from './port.js';
import type { Db } from '../store/port.js';

/** What a test's fake delivery engine saw: one row per (event, destination). */
export interface Enqueued {
  eventId: string;
  destination: string;
  message: Record<string, unknown>;
  priority: 'normal' | 'high' | undefined;
}

/** An `Outbound` that records instead of sending, and writes nothing: the caller's tx still commits. */
export function recordingDeliveries(): Outbound & { seen: Enqueued[] } {
  const seen: Enqueued[] = [];
  return {
    seen,
    async enqueue(_tx: Db, req) {
      seen.push({
        eventId: req.eventId,
        destination: req.destination,
        message: req.message as unknown as Record<string, unknown>,
        priority: req.priority,
      });
      return { id: `dlv_${seen.length}` };
    },
  };
}
