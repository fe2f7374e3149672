-- The event log: append-only, hash-chained. `seq` is assigned from log_head inside the appending
-- transaction, so a deleted row leaves a gap that `audit verify` sees.
CREATE TABLE events (
  seq            INTEGER PRIMARY KEY,
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
  recorded_at    INTEGER NOT NULL
);
CREATE INDEX events_correlation ON events (correlation_id, seq);
CREATE INDEX events_task ON events (task_id, seq);
CREATE INDEX events_type ON events (type, seq);

CREATE TABLE log_head (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  seq  INTEGER NOT NULL,
  hash TEXT NOT NULL
);
INSERT INTO log_head (id, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

-- Transactional outbox: one row per event, written in the event's transaction; the relay hands it to
-- in-process subscribers in order per correlation id.
CREATE TABLE outbox (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id       TEXT NOT NULL,
  topic          TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  status         TEXT NOT NULL DEFAULT 'pending',
  attempts       INTEGER NOT NULL DEFAULT 0,
  available_at   INTEGER NOT NULL,
  lease_until    INTEGER,
  last_error     TEXT,
  created_at     INTEGER NOT NULL
);
CREATE INDEX outbox_ready ON outbox (status, available_at, id);
CREATE INDEX outbox_correlation ON outbox (correlation_id, id);

-- Consumer de-duplication: a consumer records each event id it has processed.
CREATE TABLE inbox (
  consumer     TEXT NOT NULL,
  event_id     TEXT NOT NULL,
  processed_at INTEGER NOT NULL,
  PRIMARY KEY (consumer, event_id)
);

-- Evidence vault: raw payloads, AES-256-GCM encrypted; the ref is the additional authenticated data.
CREATE TABLE vault (
  ref        TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  digest     TEXT NOT NULL,
  iv         BLOB NOT NULL,
  tag        BLOB NOT NULL,
  ciphertext BLOB NOT NULL,
  key_id     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX vault_expiry ON vault (expires_at);
