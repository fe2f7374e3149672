-- The skill a task runs, for the skill budgets (per UTC day, at once).
ALTER TABLE a2a_tasks ADD COLUMN skill TEXT;
CREATE INDEX a2a_tasks_skill ON a2a_tasks (skill, created_at);
