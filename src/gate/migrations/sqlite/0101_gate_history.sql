-- What CEL's `history` and `session.untrusted` read (src/gate/service/history-store.ts, docs/policy.md
-- "History"), kept so a restart keeps them. `session_key` is `s:<session id>` or `t:<task id>`.
-- One row per decided intent, the newest 200 per key kept; `event_id` is its agent.tool.requested.
CREATE TABLE gate_history (
  event_id     TEXT PRIMARY KEY,
  session_key  TEXT NOT NULL,
  at           BIGINT NOT NULL,
  kind         TEXT NOT NULL,
  tool         TEXT NOT NULL,
  decision     TEXT NOT NULL,
  untrusted    INTEGER NOT NULL,
  paths        TEXT NOT NULL,
  host         TEXT NOT NULL
);

CREATE INDEX gate_history_session ON gate_history (session_key, at);

-- Once a session took outside content in, it stays untrusted, however far its history has rolled on.
CREATE TABLE gate_untrusted_sessions (
  session_key  TEXT PRIMARY KEY,
  since        BIGINT NOT NULL,
  source       TEXT NOT NULL
);
