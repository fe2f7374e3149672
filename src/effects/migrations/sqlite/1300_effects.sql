-- Effects with receipts (src/effects, issue 20): one row per side effect, keyed by its idempotency key
-- (derived from the plan digest and the capability id), with the receipt that came back.
CREATE TABLE effects (
  id                  TEXT PRIMARY KEY,
  idempotency_key     TEXT NOT NULL UNIQUE,
  kind                TEXT NOT NULL,
  ref                 TEXT NOT NULL,
  target              TEXT NOT NULL,
  status              TEXT NOT NULL,
  plan_digest         TEXT NOT NULL,
  capability_id       TEXT,
  policy_revision     TEXT,
  approval_id         TEXT,
  task_id             TEXT,
  correlation_id      TEXT,
  causation_id        TEXT,
  provider_id         TEXT,
  answer_digest       TEXT,
  detail              TEXT,
  prepared_event_id   TEXT NOT NULL,
  receipted_event_id  TEXT,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL
);
-- The takeover list (status), a task's effects, an effect by what it acts for, a correlation's trace.
CREATE INDEX effects_status ON effects (status, created_at);
CREATE INDEX effects_task ON effects (task_id);
CREATE INDEX effects_ref ON effects (ref);
CREATE INDEX effects_correlation ON effects (correlation_id);
