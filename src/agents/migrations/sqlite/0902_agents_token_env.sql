-- A config agent's `token_env` (the variable's name, never the token): a replica whose own config does
-- not list the agent reads the token from its own environment and routes to it too (src/agents/sync.ts).
ALTER TABLE agents ADD COLUMN token_env TEXT;
