-- A2A (src/a2a): the tasks Switchboard serves as an A2A agent, and their push configs.
-- `a2a_tasks.task` is the A2A Task in ProtoJSON (history, artifacts, status); `state` mirrors its
-- status for filters. `cause_event_id` is the event the Switchboard task was launched from: the task
-- events carry it as their causation, which is how a task event finds its A2A task.
CREATE TABLE a2a_tasks (
  id             TEXT PRIMARY KEY,
  owner          TEXT NOT NULL,
  context_id     TEXT NOT NULL,
  cause_event_id TEXT,
  sb_task_id     TEXT,
  state          TEXT NOT NULL,
  task           TEXT NOT NULL,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL
);
CREATE INDEX a2a_tasks_owner ON a2a_tasks (owner, created_at);
CREATE INDEX a2a_tasks_context ON a2a_tasks (context_id);
CREATE UNIQUE INDEX a2a_tasks_cause ON a2a_tasks (cause_event_id);
-- One row per push config of a task; removed with its task.
CREATE TABLE a2a_push_configs (
  task_id      TEXT NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
  id           TEXT NOT NULL,
  url          TEXT NOT NULL,
  token        TEXT NOT NULL,
  auth_scheme  TEXT,
  auth_ref     TEXT,
  wire_version TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  PRIMARY KEY (task_id, id)
);
-- The push-signing keys (ES256). `private_ref` points into the vault; a key stays in the JWKS until
-- `retire_at` (its last token has expired), and signs only until `rotate_at`.
CREATE TABLE a2a_signing_keys (
  kid         TEXT PRIMARY KEY,
  public_jwk  TEXT NOT NULL,
  private_ref TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  rotate_at   BIGINT NOT NULL,
  retire_at   BIGINT NOT NULL
);
