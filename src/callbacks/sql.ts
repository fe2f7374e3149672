/** SQL of the callbacks module (table in migration 0470): the same text on both dialects. */

export interface FeishuCardRow {
  channel: string;
  message_id: string;
  approval_id: string;
  title: string;
  summary: string;
}

export const insertFeishuCard = (c: FeishuCardRow, now: number) => ({
  text: `INSERT INTO feishu_cards (channel, message_id, approval_id, title, summary, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (channel, message_id) DO NOTHING`,
  values: [c.channel, c.message_id, c.approval_id, c.title, c.summary, now],
});

export const selectFeishuCards = (approvalId: string) => ({
  text: `SELECT channel, message_id, approval_id, title, summary FROM feishu_cards
         WHERE approval_id = $1 ORDER BY created_at, channel, message_id`,
  values: [approvalId],
});

/** Feishu updates a card only within 14 days of sending; rows older than that are of no use. */
export const deleteFeishuCardsBefore = (before: number) => ({
  text: 'DELETE FROM feishu_cards WHERE created_at < $1',
  values: [before],
});
