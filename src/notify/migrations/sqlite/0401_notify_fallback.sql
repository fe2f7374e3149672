-- A delivery whose route names fallback channels: after `after` failed attempts (or when it is dead)
-- the same message goes to the fallback channels, once (`fired_at`).
CREATE TABLE notify_fallbacks (
  delivery_id TEXT PRIMARY KEY,
  sent_event_id TEXT NOT NULL,
  destination TEXT NOT NULL,
  fallback TEXT NOT NULL,
  after_failures INTEGER NOT NULL,
  lane TEXT NOT NULL,
  message TEXT NOT NULL,
  fired_at BIGINT,
  created_at BIGINT NOT NULL
);
