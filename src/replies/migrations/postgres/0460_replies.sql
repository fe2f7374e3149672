-- Replies from a phone resume a headless session (src/replies, docs/replies.md).
-- A chat message that carries a reply target: a reply to it (Telegram reply_to_message) resumes
-- exactly this task's session until `expires_at`. Written when the delivery succeeds (provider id known).
CREATE TABLE reply_targets (
  channel TEXT NOT NULL,
  provider_message_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (channel, provider_message_id)
);
CREATE INDEX reply_targets_expires ON reply_targets (expires_at);
-- One row per reply that resumed (or is resuming) a task: a signed link's nonce, or a chat update id,
-- so a link works once and a redelivered update never resumes twice.
CREATE TABLE reply_uses (
  use_id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  via TEXT NOT NULL,
  used_at BIGINT NOT NULL
);
