-- A pending approval re-announced shortly before it expires: one row per approval, so the reminder
-- goes out at most once (the INSERT claims it, also across replicas). `approvals` is only read.
CREATE TABLE notify_reminders (
  approval_id TEXT PRIMARY KEY,
  sent_event_id TEXT,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
