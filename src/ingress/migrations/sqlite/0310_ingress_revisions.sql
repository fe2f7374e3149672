-- The newest revision admitted per resource (admission/order.ts): a delivery whose revision is older
-- is dropped as `out_of_order`. `revision_at` and `updated_at` are epoch milliseconds.
CREATE TABLE ingress_revisions (
  source       TEXT NOT NULL,
  resource     TEXT NOT NULL,
  revision_at  BIGINT NOT NULL,
  tag          TEXT,
  event_id     TEXT NOT NULL,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (source, resource)
);
CREATE INDEX ingress_revisions_updated ON ingress_revisions (updated_at);
