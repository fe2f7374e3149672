-- Away mode: one row per owner ('' is the tenant's own row, used when a signal names no owner).
-- `last_input_at` is the last prompt a person typed, for the optional automatic rule.
CREATE TABLE away_state (
  owner TEXT PRIMARY KEY,
  away INTEGER NOT NULL,
  changed_at BIGINT NOT NULL,
  changed_by TEXT NOT NULL,
  last_input_at BIGINT
);
-- Per runtime session: when it last showed activity (to say how long it has waited), and whether an
-- idle message is already out (repeats are folded until the session is active again).
CREATE TABLE signal_sessions (
  session_key TEXT PRIMARY KEY,
  last_activity_at BIGINT,
  idle_open INTEGER NOT NULL,
  idle_folded INTEGER NOT NULL,
  updated_at BIGINT NOT NULL
);
