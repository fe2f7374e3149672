-- Agents (src/agents): the registry of remote A2A agents and the receipts of their collaborations.
-- `agents` holds every known agent, from config (`source = 'config'`) or self-registered through
-- POST /v1/agents (`source = 'api'`), with its card (ProtoJSON), liveness and routing statistics.
CREATE TABLE agents (
  tenant_id     TEXT NOT NULL,
  id            TEXT NOT NULL,
  source        TEXT NOT NULL,
  card_url      TEXT,
  card          TEXT NOT NULL,
  weight        DOUBLE PRECISION NOT NULL,
  status        TEXT NOT NULL,
  load          DOUBLE PRECISION NOT NULL,
  success_ewma  DOUBLE PRECISION NOT NULL,
  latency_ewma  DOUBLE PRECISION,
  last_seen     BIGINT,
  registered_by TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
-- One row per collaboration: the receipt. `attempts` is the JSON list of every agent tried.
CREATE TABLE collaborations (
  ref_id        TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL,
  caller        TEXT NOT NULL,
  waiter        TEXT NOT NULL,
  from_task_id  TEXT,
  skill         TEXT NOT NULL,
  state         TEXT NOT NULL,
  agent         TEXT,
  attempts      TEXT NOT NULL,
  result        TEXT,
  error         TEXT,
  event_id      TEXT NOT NULL,
  started_at    BIGINT NOT NULL,
  finished_at   BIGINT
);
CREATE INDEX collaborations_open ON collaborations (tenant_id, state);
