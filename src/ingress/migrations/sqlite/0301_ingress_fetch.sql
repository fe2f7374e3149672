-- A trigger's `fetch` re-reads the authoritative object; the run keeps the trusted facts of it (JSON)
-- that its task may be templated from.
ALTER TABLE ingress_runs ADD COLUMN fetched TEXT;
