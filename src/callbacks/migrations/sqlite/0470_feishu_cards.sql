-- Feishu app cards that carry approval buttons (src/callbacks, docs/callbacks.md).
-- One row per card message an app channel posted for an approval (`message_id` is Feishu's om_…),
-- written when the delivery succeeds. When the approval is decided or expires, every card of it is
-- updated in place (PATCH im/v1/messages/:message_id) to say who decided and when.
CREATE TABLE feishu_cards (
  channel TEXT NOT NULL,
  message_id TEXT NOT NULL,
  approval_id TEXT NOT NULL,
  title TEXT NOT NULL,
  summary TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (channel, message_id)
);
CREATE INDEX feishu_cards_approval ON feishu_cards (approval_id);
