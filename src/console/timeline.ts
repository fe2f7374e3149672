import type { Envelope } from '../envelope/index.js';
import type { EventLog, StoredEvent } from '../log/index.js';

/**
 * A task's timeline, read from the log only: the events carrying its task id, the events of its
 * correlation (the webhook that launched it, its lifecycle), and the deliveries of its notifications,
 * which start their own chain (correlated to the notification event, src/delivery/engine/service.ts).
 * Pure parts (`arrange`, `summaryLine`) are pinned by timeline.test.ts.
 */

/** Each read is one page of the log; a task with more is shown up to here, and says so. */
export const TIMELINE_READ = 1000;
/** Notifications whose deliveries are looked up (one read each). */
const NOTIFICATIONS_FOLLOWED = 50;
/** Indentation stops here: deeper chains are drawn at this depth. */
export const MAX_DEPTH = 8;

export interface TimelineRow {
  seq: number;
  envelope: Envelope;
  /** How many causes up the chain lead to an event shown here (0: its cause is not on the timeline). */
  depth: number;
}

export async function readTimeline(
  log: EventLog,
  task: { id: string; correlation_id: string },
): Promise<{ rows: TimelineRow[]; cut: boolean }> {
  const [byTask, byCorrelation] = await Promise.all([
    log.list({ taskId: task.id, limit: TIMELINE_READ }),
    log.list({ correlationId: task.correlation_id, limit: TIMELINE_READ }),
  ]);
  const notes = [...byTask, ...byCorrelation]
    .filter((e) => e.envelope.type === 'agent.notification.sent')
    .slice(0, NOTIFICATIONS_FOLLOWED);
  const deliveries = await Promise.all(
    notes.map((n) => log.list({ correlationId: n.envelope.event_id, limit: 100 })),
  );
  const cut = byTask.length >= TIMELINE_READ || byCorrelation.length >= TIMELINE_READ;
  return { rows: arrange([byTask, byCorrelation, ...deliveries].flat()), cut };
}

/** In log order, each event once, indented under its cause when the cause is on the timeline. */
export function arrange(events: readonly StoredEvent[]): TimelineRow[] {
  const byId = new Map<string, StoredEvent>();
  for (const e of events) byId.set(e.envelope.event_id, e);
  const sorted = [...byId.values()].sort((a, b) => a.seq - b.seq);
  const depth = new Map<string, number>();
  return sorted.map((e) => {
    const cause = e.envelope.causation_id;
    const parent = cause ? depth.get(cause) : undefined;
    const d = parent === undefined ? 0 : Math.min(parent + 1, MAX_DEPTH);
    depth.set(e.envelope.event_id, d);
    return { seq: e.seq, envelope: e.envelope, depth: d };
  });
}

/** The summary fields worth a glance, in the order a person reads them. */
const SUMMARY_KEYS = [
  'decision',
  'reason_code',
  'state',
  'stage',
  'summary',
  'action',
  'outcome',
  'decided_by',
  'via',
  'comment',
  'destination',
  'channel',
  'status',
  'attempt',
  'reason',
  'by',
  'approval_id',
  'delivery_id',
];
const VALUE_CHARS = 80;

/** One line about an event: its subject and a few scalar summary fields (redacted by construction). */
export function summaryLine(env: Envelope): string {
  const parts: string[] = [];
  const s = env.redacted_summary;
  // The action is often in the summary too (approvals): say it once.
  const action = env.subject.action !== s['action'] ? env.subject.action : null;
  const subject = [env.subject.tool, action].filter(Boolean).join(' ');
  if (subject) parts.push(clip(subject));
  for (const key of SUMMARY_KEYS) {
    const v = s[key];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      parts.push(`${key}=${clip(String(v))}`);
    if (parts.length >= 5) break;
  }
  return parts.join(' · ');
}

function clip(text: string): string {
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}
