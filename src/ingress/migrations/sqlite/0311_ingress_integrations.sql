-- A source whose credential the provider refused (a 401 on a trigger's re-read): one row while it is
-- revoked. Admission derives no task from the source meanwhile; a later re-read that succeeds deletes
-- the row (admission/revoked.ts). `since` is epoch milliseconds.
CREATE TABLE ingress_integrations (
  source    TEXT PRIMARY KEY,
  status    TEXT NOT NULL CHECK (status IN ('revoked')),
  reason    TEXT NOT NULL,
  since     BIGINT NOT NULL,
  event_id  TEXT NOT NULL
);
