-- Approvals (src/approvals, docs/approvals.md). Times are epoch milliseconds, JSON is TEXT.
-- A decision is one conditional UPDATE on (id, state = 'pending', expires_at > now), so two
-- approvers pressing at once produce exactly one decision; `version` counts every change.
CREATE TABLE approvals (
  id               TEXT PRIMARY KEY,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired')),
  action           TEXT NOT NULL,
  reason           TEXT NOT NULL,
  plan             TEXT NOT NULL,
  plan_digest      TEXT NOT NULL,
  task_id          TEXT,
  session_id       TEXT,
  requested_by     TEXT NOT NULL,
  approvers        TEXT,
  correlation_id   TEXT NOT NULL,
  request_event_id TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  expires_at       BIGINT NOT NULL,
  decided_at       BIGINT,
  decided_by       TEXT,
  comment          TEXT,
  capability       TEXT,
  recheck          TEXT,
  version          INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX approvals_state_expires ON approvals (state, expires_at);
CREATE INDEX approvals_task ON approvals (task_id);
CREATE INDEX approvals_requested_by ON approvals (requested_by);
