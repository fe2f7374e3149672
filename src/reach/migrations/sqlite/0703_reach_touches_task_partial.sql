-- Issue #15: a touch made outside any task (task_id NULL) is never looked up by task, so the task
-- index holds only rows that have one: one b-tree write (a WAL page) less per such touch. Every query
-- on it says `task_id = $n`, which implies NOT NULL, so the planner still uses it (indexes.test.ts).
DROP INDEX reach_touches_task;
CREATE INDEX reach_touches_task ON reach_touches (tenant_id, task_id, created_at) WHERE task_id IS NOT NULL;
