-- A progress report names its Switchboard task; the A2A task is found by it.
CREATE INDEX a2a_tasks_sb_task ON a2a_tasks (sb_task_id);
