-- Tasks (src/tasks): one row per launched agent run, A2A states. Every state change is one conditional
-- UPDATE (`WHERE state IN (...)`), so two writers racing (exit vs. max runtime) cannot both win.
-- The untrusted input is not stored here: it stays in the vault (`untrusted_ref`) and the task's work dir.
CREATE TABLE tasks (
  id               TEXT PRIMARY KEY,
  state            TEXT NOT NULL,
  owner            TEXT,
  runtime          TEXT,
  session_id       TEXT,
  tenant_id        TEXT NOT NULL,
  environment      TEXT NOT NULL,
  correlation_id   TEXT NOT NULL,
  cause_event_id   TEXT NOT NULL,
  hop_count        INTEGER NOT NULL,
  depth            INTEGER NOT NULL,
  title            TEXT NOT NULL,
  trigger_id       TEXT NOT NULL,
  action           TEXT NOT NULL,
  untrusted_ref    TEXT,
  untrusted_digest TEXT,
  steps            INTEGER NOT NULL DEFAULT 0,
  max_steps        INTEGER,
  max_runtime_ms   BIGINT,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  last_activity_at BIGINT NOT NULL,
  stalled_at       BIGINT,
  exit_code        INTEGER,
  pid              INTEGER,
  boot_id          TEXT,
  host             TEXT,
  gateway_pid      INTEGER,
  key_digest       TEXT,
  error            TEXT
);
CREATE INDEX tasks_state_activity ON tasks (state, last_activity_at);
CREATE INDEX tasks_boot ON tasks (boot_id, state);
CREATE INDEX tasks_correlation ON tasks (correlation_id);
