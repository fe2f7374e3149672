-- A task's push configs go with it (issue 14: "removed when the task is deleted"). The foreign key
-- that did this went in 0601 (the SDK saves an inline config before the task row exists), so a
-- trigger does it instead, whoever deletes the task.
CREATE FUNCTION a2a_delete_push_configs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM a2a_push_configs WHERE task_id = OLD.id;
  RETURN OLD;
END;
$$;
CREATE TRIGGER a2a_tasks_delete_push_configs AFTER DELETE ON a2a_tasks
  FOR EACH ROW EXECUTE FUNCTION a2a_delete_push_configs();
