import type { Envelope } from '../envelope/index.js';
import type { Services } from '../kernel/module.js';
import type { NotifyConfig } from './config.js';
import { approvalActions } from './links.js';
import { reminderDraft } from './message.js';
import type { Notifier } from './service.js';
import * as q from './sql.js';

/**
 * Issue 6: "a pending approval is re-announced before it expires". Approvals are read straight from
 * the `approvals` table (read-only): the `ApprovalService` port has no "expiring soon" query, and one
 * indexed SELECT (`approvals_state_expires`) per poll is cheaper than listing every pending approval.
 * `notify_reminders` remembers which approvals were re-announced, so each gets at most one reminder,
 * also when several replicas poll at once (the INSERT claims it).
 */

/** How often the worker looks; well inside the two-minute lead, so a reminder is never seconds late. */
export const REMINDER_POLL_MS = 5000;
/** Per poll: a burst of approvals is worked through over a few polls rather than in one long pass. */
const REMINDER_BATCH = 50;

export async function remindExpiring(services: Services, n: Notifier, cfg: NotifyConfig): Promise<number> {
  if (cfg.reannounce_before_seconds === 0) return 0;
  const now = services.now();
  const rows = await services.db.query<q.ExpiringApproval>(
    q.expiringApprovals(now, now + cfg.reannounce_before_seconds * 1000, REMINDER_BATCH),
  );
  let sent = 0;
  for (const row of rows) {
    const expiresAt = Number(row.expires_at);
    const task = row.task_id ? await services.tasks?.get(row.task_id) : undefined;
    const actions = await approvalActions(services, row.id);
    const who = {
      task_id: row.task_id,
      agent: row.requested_by,
      ...(task?.title ? { task_title: task.title } : {}),
    };
    const minutesLeft = Math.max(1, Math.ceil((expiresAt - now) / 60_000));
    const draft = reminderDraft(
      { action: row.action, reason: row.reason, expires_at: new Date(expiresAt).toISOString() },
      minutesLeft,
      who,
      cfg.locale,
      actions,
    );
    sent += await services.db.tx(async (tx) => {
      const [claimed] = await tx.query(q.claimReminder(row.id, expiresAt, now));
      if (!claimed) return 0;
      const [ev] = await tx.query<{ body: string }>({
        text: 'SELECT body FROM events WHERE event_id = $1',
        values: [row.request_event_id],
      });
      // Without its request event there is nothing to hang the reminder's causation on: skip it, once.
      if (!ev) return 0;
      const cause = JSON.parse(ev.body) as Envelope;
      const out = await n.dispatch(tx, draft, cause, 'high', task?.owner ?? '', {
        reminder: true,
        approval_id: row.id,
        expires_at: expiresAt,
      });
      await tx.query(q.reminderSent(row.id, out.event.event_id));
      return out.kind === 'no_route' ? 0 : 1;
    });
  }
  if (sent > 0) services.log.notify();
  return sent;
}
