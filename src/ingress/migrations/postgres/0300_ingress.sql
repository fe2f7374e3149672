-- Ingress: one row per (source, delivery id). The unique key is the dedup record; `status` says whether
-- admission processed the delivery, because GitHub redeliveries reuse the id and a failed one must be
-- accepted again.
CREATE TABLE ingress_deliveries (
  source       TEXT NOT NULL,
  delivery_id  TEXT NOT NULL,
  event_id     TEXT NOT NULL,
  tenant_id    TEXT NOT NULL,
  event_name   TEXT,
  payload_ref  TEXT NOT NULL,
  status       TEXT NOT NULL,
  accepted     INTEGER NOT NULL DEFAULT 1,
  received_at  BIGINT NOT NULL,
  processed_at BIGINT,
  last_error   TEXT,
  PRIMARY KEY (source, delivery_id)
);
CREATE INDEX ingress_deliveries_event ON ingress_deliveries (event_id);
CREATE INDEX ingress_deliveries_received ON ingress_deliveries (received_at);

-- Admitted runs, one row per run. A coalescing key has at most one run waiting and one active: the
-- partial unique indexes hold that across replicas.
CREATE TABLE ingress_runs (
  id          TEXT PRIMARY KEY,
  trigger_id  TEXT NOT NULL,
  run_key     TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  state       TEXT NOT NULL,
  event_id    TEXT NOT NULL,
  due_at      BIGINT NOT NULL,
  task_id     TEXT,
  error       TEXT,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX ingress_runs_waiting ON ingress_runs (trigger_id, run_key) WHERE state = 'waiting';
CREATE UNIQUE INDEX ingress_runs_active ON ingress_runs (trigger_id, run_key) WHERE state IN ('launching', 'active');
CREATE INDEX ingress_runs_due ON ingress_runs (state, due_at);
CREATE INDEX ingress_runs_trigger ON ingress_runs (trigger_id, created_at);
CREATE INDEX ingress_runs_task ON ingress_runs (task_id);
