/** SQL of the replies module (tables in migration 0460): the same text on both dialects. */

export interface TargetRow {
  channel: string;
  provider_message_id: string;
  task_id: string;
  session_id: string;
  expires_at: number;
}

export const insertTarget = (t: TargetRow, now: number) => ({
  text: `INSERT INTO reply_targets (channel, provider_message_id, task_id, session_id, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (channel, provider_message_id) DO NOTHING`,
  values: [t.channel, t.provider_message_id, t.task_id, t.session_id, t.expires_at, now],
});

export const selectTarget = (channel: string, messageId: string) => ({
  text: `SELECT channel, provider_message_id, task_id, session_id, expires_at FROM reply_targets
         WHERE channel = $1 AND provider_message_id = $2`,
  values: [channel, messageId],
});

/** Targets are kept a day past their expiry, so a late reply is told "expired" rather than ignored. */
export const deleteExpiredTargets = (before: number) => ({
  text: 'DELETE FROM reply_targets WHERE expires_at < $1',
  values: [before],
});

export const claimUse = (useId: string, taskId: string, via: string, now: number) => ({
  text: `INSERT INTO reply_uses (use_id, task_id, via, used_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (use_id) DO NOTHING RETURNING use_id`,
  values: [useId, taskId, via, now],
});

export const releaseUse = (useId: string) => ({
  text: 'DELETE FROM reply_uses WHERE use_id = $1',
  values: [useId],
});

export const selectUse = (useId: string) => ({
  text: 'SELECT use_id FROM reply_uses WHERE use_id = $1',
  values: [useId],
});
