-- See migrations/sqlite/0001_core.sql for the reasons; the shapes are the same.
CREATE TABLE events (
  seq            BIGINT PRIMARY KEY,
  event_id       TEXT NOT NULL UNIQUE,
  type           TEXT NOT NULL,
  occurred_at    TEXT NOT NULL,
  tenant_id      TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  causation_id   TEXT,
  task_id        TEXT,
  session_id     TEXT,
  body           TEXT NOT NULL,
  prev_hash      TEXT NOT NULL,
  hash           TEXT NOT NULL,
  recorded_at    BIGINT NOT NULL
);
CREATE INDEX events_correlation ON events (correlation_id, seq);
CREATE INDEX events_task ON events (task_id, seq);
CREATE INDEX events_type ON events (type, seq);

CREATE TABLE log_head (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  seq  BIGINT NOT NULL,
  hash TEXT NOT NULL
);
INSERT INTO log_head (id, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

CREATE TABLE outbox (
  id             BIGSERIAL PRIMARY KEY,
  event_id       TEXT NOT NULL,
  topic          TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  status         TEXT NOT NULL DEFAULT 'pending',
  attempts       INTEGER NOT NULL DEFAULT 0,
  available_at   BIGINT NOT NULL,
  lease_until    BIGINT,
  last_error     TEXT,
  created_at     BIGINT NOT NULL
);
CREATE INDEX outbox_ready ON outbox (status, available_at, id);
CREATE INDEX outbox_correlation ON outbox (correlation_id, id);

CREATE TABLE inbox (
  consumer     TEXT NOT NULL,
  event_id     TEXT NOT NULL,
  processed_at BIGINT NOT NULL,
  PRIMARY KEY (consumer, event_id)
);

CREATE TABLE vault (
  ref        TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  digest     TEXT NOT NULL,
  iv         BYTEA NOT NULL,
  tag        BYTEA NOT NULL,
  ciphertext BYTEA NOT NULL,
  key_id     TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT
);
CREATE INDEX vault_expiry ON vault (expires_at);
