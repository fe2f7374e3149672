-- Launch idempotency (docs/tasks.md, "A launch runs at most once"). `launch_key`: the caller's marker
-- (an admitted run's id); a second launch with it returns this task and runs nothing. `spawn_at`: set
-- just before the agent process is spawned (or the action's POST sent); a task without it never ran
-- anything, so a launcher recovering from a crash may say so instead of guessing.
ALTER TABLE tasks ADD COLUMN launch_key TEXT;
ALTER TABLE tasks ADD COLUMN spawn_at BIGINT;
CREATE UNIQUE INDEX tasks_launch_key ON tasks (launch_key);
