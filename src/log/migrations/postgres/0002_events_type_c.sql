-- Type filters compare bytes: `agent.*` is the range ['agent.', 'agent/') in the C collation, which
-- only an index in the same collation serves (the database's own collation may order punctuation
-- differently). Equality reads the same in every deterministic collation.
DROP INDEX events_type;
CREATE INDEX events_type ON events (type COLLATE "C", seq);
