import type { NotifyDeps } from './module.js';
import type { NotifyConfig } from './config.js';
import { approvalActions } from './links.js';
import { reminderDraft } from './message.js';
import type { Notifier } from './service.js';
import * as q from './sql.js';

/**
 * Issue 6: "a pending approval is re-announced before it expires". The approvals module lists the
 * pending approvals expiring soon (`ApprovalService.expiring`, one indexed SELECT per poll);
 * `notify_reminders` remembers which approvals were re-announced, so each gets at most one reminder,
 * also when several replicas poll at once (the INSERT claims it).
 */

/** How often the worker looks; well inside the two-minute lead, so a reminder is never seconds late. */
export const REMINDER_POLL_MS = 5000;
/** Per poll: a burst of approvals is worked through over a few polls rather than in one long pass. */
const REMINDER_BATCH = 50;

export async function remindExpiring(services: NotifyDeps, n: Notifier, cfg: NotifyConfig): Promise<number> {
  if (cfg.reannounce_before_seconds === 0) return 0;
  const approvals = services.approvals;
  if (!approvals?.expiring) return 0;
  const now = services.now();
  const reminded = new Set(
    (await services.db.query<{ approval_id: string }>(q.remindedApprovals(now))).map((r) => r.approval_id),
  );
  // Asking for as many more as were reminded already leaves a full batch once those are skipped.
  // An approval that lives no longer than the window (a 5 s phone hold, say) would be re-announced
  // right after its first announcement: it gets none.
  const window = cfg.reannounce_before_seconds * 1000;
  const expiring = await approvals.expiring(now, now + window, REMINDER_BATCH + reminded.size, window);
  const rows = expiring.filter((a) => !reminded.has(a.id)).slice(0, REMINDER_BATCH);
  let sent = 0;
  for (const row of rows) {
    const expiresAt = row.expires_at;
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
      const requested = await services.log.get(row.request_event_id, tx);
      // Without its request event there is nothing to hang the reminder's causation on: skip it, once.
      if (!requested) return 0;
      const cause = requested.envelope;
      const out = await n.dispatch(tx, draft, cause, 'high', task?.owner ?? '', {
        reminder: true,
        approval_id: row.id,
        expires_at: expiresAt,
      });
      await tx.query(q.reminderSent(row.id, out.event.event_id));
      return out.kind === 'no_route' ? 0 : 1;
    });
  }
  return sent;
}
