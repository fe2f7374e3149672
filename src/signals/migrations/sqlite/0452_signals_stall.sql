-- Stall watch for interactive sessions (signals.stall_after_seconds): where the session is (`working`
-- mid-turn, `waiting` for a person, `idle` between turns), who and where it is for the notice, and
-- when its one stall notice went out (cleared by the next activity).
ALTER TABLE signal_sessions ADD COLUMN phase TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE signal_sessions ADD COLUMN stalled_at BIGINT;
ALTER TABLE signal_sessions ADD COLUMN agent TEXT;
ALTER TABLE signal_sessions ADD COLUMN project TEXT;
CREATE INDEX signal_sessions_stall ON signal_sessions (phase, last_activity_at);
