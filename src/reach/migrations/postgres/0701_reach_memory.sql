-- Reach memory (docs/reach.md, "Memory"): working memory a task writes (`kind = note`, one row per
-- key) and touches archived from short-term memory (`kind = touch`), searchable by `memory_search`.
-- Scoped by tenant and owner: a key never reads another owner's rows. `body` is the searchable text,
-- already cut into words by the module, so tsvector here and FTS5 on SQLite see the same tokens.
CREATE TABLE reach_memory (
  id BIGSERIAL PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  task_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  body TEXT NOT NULL,
  body_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX reach_memory_key ON reach_memory (tenant_id, owner, task_id, kind, key);
CREATE INDEX reach_memory_owner ON reach_memory (tenant_id, owner, updated_at);
CREATE INDEX reach_memory_fts ON reach_memory USING GIN (body_tsv);
