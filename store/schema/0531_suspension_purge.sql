-- The purge of a local actor deleted at the end of its suspension runs in
-- bounded batches, one transaction each, after the transaction that
-- deletes it (ends the suspension, queues the Delete of the actor, marks
-- it deleted): an actor with 100,000 followers is not one transaction's
-- worth of rows. purged_at is when the last batch found nothing left; a
-- deletion whose purged_at is NULL (a crash midway, or a deletion made
-- before this migration, which left rows behind) is purged again by the
-- next hourly run. Unix milliseconds.
ALTER TABLE actor_suspensions ADD COLUMN purged_at BIGINT;
