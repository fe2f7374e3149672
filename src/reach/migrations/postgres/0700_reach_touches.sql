-- Touches through the reach layer (src/reach, docs/reach.md): one row per request id and caller.
-- The row answers GET /v1/touch/{id}, makes a repeated request id idempotent, carries an approval
-- across the retry, counts a task's touches for its cap, and holds the one-line summaries that
-- short-term memory shows. Params and results are in the vault (`response_ref`), never here.
CREATE TABLE reach_touches (
  tenant_id TEXT NOT NULL,
  caller TEXT NOT NULL,
  request_id TEXT NOT NULL,
  task_id TEXT,
  owner TEXT NOT NULL,
  tool TEXT NOT NULL,
  channel TEXT NOT NULL,
  params_digest TEXT NOT NULL,
  status TEXT NOT NULL,
  approval_id TEXT,
  response_ref TEXT,
  error_code TEXT,
  summary TEXT,
  archived INTEGER NOT NULL DEFAULT 0,
  cost_ms INTEGER,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  deadline_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, caller, request_id)
);
CREATE INDEX reach_touches_task ON reach_touches (tenant_id, task_id, created_at);
CREATE INDEX reach_touches_expires ON reach_touches (expires_at);
