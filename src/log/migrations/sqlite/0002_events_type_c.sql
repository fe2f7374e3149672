-- Nothing to change on SQLite: its default BINARY collation already compares `type` as bytes, so
-- events_type serves the range that `agent.*` becomes. The version exists so both dialects hold the
-- same migrations (PostgreSQL rebuilds events_type in the C collation).
SELECT 1;
