-- Governance counters per scope (a task id, or `key:<name>` for a key bound to no task): the last
-- report, the sends of the last minute, the open progress digest. One row, locked while deciding.
CREATE TABLE notify_state (
  scope TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  digest_due_at BIGINT,
  updated_at BIGINT NOT NULL
);
CREATE INDEX notify_state_due ON notify_state (digest_due_at);
