-- Delivery engine (src/delivery): one row per (event, destination), claimed by workers with a lease.
-- UNIQUE(event_id, destination): a redelivered outbox row never creates a second delivery.
CREATE TABLE deliveries (
  id              TEXT PRIMARY KEY,
  event_id        TEXT NOT NULL,
  correlation_id  TEXT NOT NULL,
  destination     TEXT NOT NULL,
  channel_type    TEXT NOT NULL,
  message         TEXT,
  payload_ref     TEXT,
  status          TEXT NOT NULL DEFAULT 'pending',
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  last_status     INTEGER,
  last_error      TEXT,
  last_response   TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  UNIQUE (event_id, destination)
);
-- Claim scans: due rows by time; expired leases by lease end.
CREATE INDEX deliveries_due ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_lease ON deliveries (status, lease_until);
CREATE INDEX deliveries_destination ON deliveries (destination, status, created_at);

-- Per-destination state every replica shares: the circuit breaker and the rate bucket as JSON.
CREATE TABLE endpoints (
  destination TEXT PRIMARY KEY,
  breaker     TEXT NOT NULL,
  bucket      TEXT NOT NULL,
  disabled    INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL
);
