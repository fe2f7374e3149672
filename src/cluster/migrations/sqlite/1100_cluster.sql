-- Cluster (src/cluster): the replicas sharing this store, the leader's lease and its terms.
-- `cluster_replicas`: one row per gateway process that ever started on this store (a fresh id per
-- start), its last heartbeat in the database's clock (epoch ms), and when it stopped cleanly.
CREATE TABLE cluster_replicas (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  host         TEXT NOT NULL,
  pid          INTEGER NOT NULL,
  started_at   BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL,
  stopped_at   BIGINT
);
CREATE INDEX cluster_replicas_heartbeat ON cluster_replicas (heartbeat_at);
-- The one lease (`name` = 'leader'): who leads, until when, and the fencing token of its term. The
-- token grows by one at every change of holder and never goes back.
CREATE TABLE cluster_lease (
  name        TEXT PRIMARY KEY,
  replica_id  TEXT NOT NULL,
  token       BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL
);
-- One row per term: the history `GET /v1/cluster` shows and the replicas test checks (one holder per token).
CREATE TABLE cluster_terms (
  token       BIGINT PRIMARY KEY,
  replica_id  TEXT NOT NULL,
  acquired_at BIGINT NOT NULL
);
