-- A push config may be stored before its task row: the SDK saves a SendMessage's inline config just
-- before the executor records the task. Its task is checked by the handler instead of a foreign key.
CREATE TABLE a2a_push_configs_new (
  task_id      TEXT NOT NULL,
  id           TEXT NOT NULL,
  url          TEXT NOT NULL,
  token        TEXT NOT NULL,
  auth_scheme  TEXT,
  auth_ref     TEXT,
  wire_version TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  PRIMARY KEY (task_id, id)
);
INSERT INTO a2a_push_configs_new SELECT task_id, id, url, token, auth_scheme, auth_ref, wire_version, created_at FROM a2a_push_configs;
DROP TABLE a2a_push_configs;
ALTER TABLE a2a_push_configs_new RENAME TO a2a_push_configs;
