-- Generated from store/schema/0040_engines.sql by `go generate ./store`: edit that file.
-- Two engines, several processes (issue 16).

-- The follower digests are kept by the store in Go now, so that a plain
-- sqlite3 shell can change the followers table: the triggers that called
-- Go functions registered on Herald's connections go.
DROP TRIGGER IF EXISTS follower_digests_insert;
DROP TRIGGER IF EXISTS follower_digests_delete;
DROP TRIGGER IF EXISTS follower_digests_update;

-- What a serving process does: 'all' (herald serve), 'web' (HTTP only) or
-- 'worker' (deliveries, jobs and sweeps, no HTTP). Commands and the status
-- page look for a live worker.
ALTER TABLE processes ADD COLUMN role TEXT NOT NULL DEFAULT 'all';

-- Flags are tested bare (WHERE in_outbox), the form both engines accept
-- (PostgreSQL's flags are BOOLEAN, and its index was made so in 0004);
-- SQLite uses a partial index only for the form its condition is written
-- in.
DROP INDEX activities_outbox;
CREATE INDEX activities_outbox ON activities(actor_id, id) WHERE in_outbox;
