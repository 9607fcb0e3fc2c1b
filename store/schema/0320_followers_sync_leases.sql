-- The followers sync is one of the queue runner's queues (package queue): a
-- sync being run is leased to its owner, a registered process, as deliveries,
-- webhook deliveries and jobs are, so that two nodes on one PostgreSQL
-- database never run the same sync and a dead node's sync is handed back.
-- updated_at is when a row last changed hands, as in the other queue tables.
ALTER TABLE followers_sync_jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE followers_sync_jobs ADD COLUMN lease_until BIGINT;
ALTER TABLE followers_sync_jobs ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
