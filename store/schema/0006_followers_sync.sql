-- FEP-8fcf followers synchronization.
--
-- The digest of a local actor's accepted followers on one origin
-- (scheme://host[:port] of the follower id): the XOR of the SHA-256 of each
-- follower id. XOR makes adding and removing a follower the same operation,
-- so the store keeps every digest current, in Go, in the transaction that
-- changes the followers (store/digests.go), and a fan-out to 3,000 hosts
-- reads 3,000 rows instead of scanning the followers table 3,000 times. No
-- row means the empty set (32 zero bytes). A change made outside Herald (a
-- sqlite3 shell) is caught up by the recompute at start and every hour.
--
-- (Databases made before migration 0040 kept the digests with triggers that
-- called Go functions; 0040 drops them.)
CREATE TABLE follower_digests (
	actor_id BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	origin   TEXT    NOT NULL, -- scheme://host[:port], as followers.origin
	digest   BYTEA   NOT NULL, -- 32 bytes
	PRIMARY KEY (actor_id, origin)
) WITHOUT ROWID;

-- Deliveries of an activity addressed to the sender's followers carry the
-- Collection-Synchronization header; set at enqueue.
ALTER TABLE activities ADD COLUMN sync_followers BOOLEAN NOT NULL DEFAULT false;

-- Syncs requested by a received header whose digest did not match ours: at
-- most one per remote actor, and (through requested_at) at most one an hour.
-- A row stays after its run (done_at set) so the hour can be enforced; the
-- worker deletes rows done more than an hour ago.
CREATE TABLE followers_sync_jobs (
	remote_actor TEXT    PRIMARY KEY, -- the actor whose followers collection we check
	url          TEXT    NOT NULL,    -- its partial collection (the header's url)
	digest       TEXT    NOT NULL,    -- the digest the header carried, hex
	requested_at BIGINT  NOT NULL,    -- unix seconds
	done_at      BIGINT,              -- NULL while it waits to run
	result       TEXT                 -- what the run did, for the operator
) WITHOUT ROWID;

CREATE INDEX followers_sync_jobs_due ON followers_sync_jobs(requested_at) WHERE done_at IS NULL;
