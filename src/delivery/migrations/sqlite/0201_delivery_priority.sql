-- The priority lane (DeliveryPort `priority: 'high'`): claimed first, and retried until delivered
-- instead of dying when the schedule is used up.
ALTER TABLE deliveries ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
CREATE INDEX deliveries_due_priority ON deliveries (status, priority, next_attempt_at);
