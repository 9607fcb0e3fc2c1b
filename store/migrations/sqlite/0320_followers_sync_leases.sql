-- Generated from store/schema/0320_followers_sync_leases.sql by `go generate ./store`: edit that file.
-- The followers sync is one of the queue runner's queues (package queue): a
-- sync being run is leased to its owner, a registered process, as deliveries,
-- webhook deliveries and jobs are, so that two nodes on one PostgreSQL
-- database never run the same sync and a dead node's sync is handed back.
-- updated_at is when a row last changed hands, as in the other queue tables.
ALTER TABLE followers_sync_jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE followers_sync_jobs ADD COLUMN lease_until INTEGER;
ALTER TABLE followers_sync_jobs ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
