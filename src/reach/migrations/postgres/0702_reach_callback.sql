-- An async touch's push callback (docs/reach.md, "Channels"): the `channels:` webhook its result is
-- delivered to through the delivery engine, enqueued in the commit that finishes the touch.
ALTER TABLE reach_touches ADD COLUMN callback TEXT;
