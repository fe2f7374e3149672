-- The cost ledger: one row per UTC day, tenant, agent, task and session ('' when the event named
-- none), summed as events arrive. Wall time is last_at - first_at of each row (epoch ms). Money is
-- kept in millionths of the price table's currency, so sums stay exact.
CREATE TABLE cost_ledger (
  day               TEXT NOT NULL,
  tenant_id         TEXT NOT NULL,
  agent_id          TEXT NOT NULL,
  task_id           TEXT NOT NULL,
  session_id        TEXT NOT NULL,
  turns             BIGINT NOT NULL DEFAULT 0,
  tool_calls        BIGINT NOT NULL DEFAULT 0,
  input_tokens      BIGINT NOT NULL DEFAULT 0,
  output_tokens     BIGINT NOT NULL DEFAULT 0,
  cache_read_tokens BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens BIGINT NOT NULL DEFAULT 0,
  cost_micros       BIGINT NOT NULL DEFAULT 0,
  unpriced_tokens   BIGINT NOT NULL DEFAULT 0,
  first_at          BIGINT NOT NULL,
  last_at           BIGINT NOT NULL,
  PRIMARY KEY (day, tenant_id, agent_id, task_id, session_id)
);

-- How far each transcript has been read: the next turn reads only what was appended since.
CREATE TABLE cost_cursors (
  source       TEXT PRIMARY KEY,
  byte_offset  BIGINT NOT NULL,
  last_id      TEXT,
  total_input  BIGINT NOT NULL DEFAULT 0,
  total_cached BIGINT NOT NULL DEFAULT 0,
  total_output BIGINT NOT NULL DEFAULT 0,
  model        TEXT,
  updated_at   BIGINT NOT NULL
);
