-- Registry state shared between replicas (src/agents/sync.ts). `card_version` moves with every card
-- written, so a replica reads a card again only when it changed. `agent_waits` is the wait-for graph:
-- one row per open attempt (waiter → agent), the depth of the collaboration it serves, and when the row
-- stops counting (a replica that died leaves rows that expire). Their count per agent is the calls open
-- to it from every replica.
ALTER TABLE agents ADD COLUMN card_version BIGINT NOT NULL DEFAULT 0;
CREATE TABLE agent_waits (
  tenant_id   TEXT NOT NULL,
  ref_id      TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  waiter      TEXT NOT NULL,
  agent       TEXT NOT NULL,
  depth       INTEGER NOT NULL,
  replica     TEXT NOT NULL,
  expires_at  BIGINT NOT NULL,
  PRIMARY KEY (ref_id, attempt)
);
CREATE INDEX agent_waits_tenant ON agent_waits (tenant_id, expires_at);
