-- A push config may be stored before its task row: the SDK saves a SendMessage's inline config just
-- before the executor records the task. Its task is checked by the handler instead of a foreign key.
ALTER TABLE a2a_push_configs DROP CONSTRAINT IF EXISTS a2a_push_configs_task_id_fkey;
