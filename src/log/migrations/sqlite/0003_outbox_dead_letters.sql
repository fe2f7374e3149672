-- A row parked as dead after the relay's last attempt keeps who failed on it: the subscriber's name
-- and the version it declared (Subscriber.version), and when it was parked, so a person can list it,
-- fix that consumer, and replay it (GET /v1/outbox/dead, POST /v1/outbox/replay).
ALTER TABLE outbox ADD COLUMN consumer TEXT;
ALTER TABLE outbox ADD COLUMN consumer_version TEXT;
ALTER TABLE outbox ADD COLUMN dead_at INTEGER;
