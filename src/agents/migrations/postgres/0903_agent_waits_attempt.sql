-- An open attempt's row says enough to end it without its process (src/agents/recover.ts): the remote
-- task (written once SendMessage answered with a task still running), the router's score and when the
-- attempt began. A replica that died mid-attempt leaves these; the recovery cancels the task and settles
-- the receipt.
ALTER TABLE agent_waits ADD COLUMN task_id TEXT;
ALTER TABLE agent_waits ADD COLUMN score REAL;
ALTER TABLE agent_waits ADD COLUMN started_at BIGINT;
