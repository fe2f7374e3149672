-- Permission prompts taken to the phone: which approval was created for which runtime session, so
-- the runtime's own "waiting for permission" notification is not sent a second time, and an approval
-- nobody answered is reported as expired.
CREATE TABLE signal_approvals (
  approval_id TEXT PRIMARY KEY,
  session_key TEXT NOT NULL,
  owner TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX signal_approvals_session ON signal_approvals (session_key, created_at);
