-- The message continuing an input-required task: one claim per task, taken by a conditional UPDATE
-- (state input-required, no live claim), so two messages at once cannot both resume it. The claim is
-- cleared when the task's state changes, and a claim older than a minute (its gateway died) is taken over.
ALTER TABLE a2a_tasks ADD COLUMN input_claim TEXT;
ALTER TABLE a2a_tasks ADD COLUMN input_claim_at BIGINT;
