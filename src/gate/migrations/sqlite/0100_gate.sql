-- The gate's incident tables (src/gate/service, docs/policy.md). Times are epoch milliseconds.
-- A revocation kills every capability of its scope issued up to `revoked_at`; rows are history, never deleted.
CREATE TABLE capability_revocations (
  id          TEXT PRIMARY KEY,
  scope       TEXT NOT NULL CHECK (scope IN ('capability', 'task', 'agent', 'tenant')),
  value       TEXT NOT NULL,
  revoked_at  BIGINT NOT NULL,
  revoked_by  TEXT NOT NULL,
  reason      TEXT
);

CREATE INDEX capability_revocations_scope ON capability_revocations (scope, value);

-- A freeze lasts until unfrozen: one row per frozen agent or tenant, deleted by unfreeze.
CREATE TABLE freezes (
  scope      TEXT NOT NULL CHECK (scope IN ('agent', 'tenant')),
  value      TEXT NOT NULL,
  frozen_at  BIGINT NOT NULL,
  frozen_by  TEXT NOT NULL,
  reason     TEXT,
  PRIMARY KEY (scope, value)
);
