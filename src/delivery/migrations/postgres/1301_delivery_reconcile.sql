-- The reconciler (issue 20 point 2): how often it asked the provider about a delivery in `reconcile`,
-- and when it may ask again. A row it settled leaves `reconcile`; one it cannot settle keeps the status
-- with reconcile_checks at the cap, for a person.
ALTER TABLE deliveries ADD COLUMN reconcile_checks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN reconcile_next_at BIGINT;
