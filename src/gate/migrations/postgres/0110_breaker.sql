-- The breaker's counts (src/gate/breaker, docs/policy.md "Breakers"): one row per counted event and
-- scope, so a redelivered event counts once. `at` is the event's time in epoch milliseconds; rows older
-- than the longest window are pruned, and a trip clears its scope's rows (counting starts again after
-- the unfreeze). `kind`: side_effect, authorized, denied, deferred, delivery_failure.
CREATE TABLE breaker_hits (
  scope     TEXT NOT NULL CHECK (scope IN ('agent', 'tenant')),
  value     TEXT NOT NULL,
  event_id  TEXT NOT NULL,
  kind      TEXT NOT NULL,
  at        BIGINT NOT NULL,
  PRIMARY KEY (scope, value, event_id)
);
CREATE INDEX breaker_hits_window ON breaker_hits (scope, value, at);
