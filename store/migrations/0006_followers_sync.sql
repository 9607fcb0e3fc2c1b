-- FEP-8fcf followers synchronization.
--
-- The digest of a local actor's accepted followers on one origin
-- (scheme://host[:port] of the follower id): the XOR of the SHA-256 of each
-- follower id. XOR makes adding and removing a follower the same operation,
-- so the triggers below keep every digest current in the transaction that
-- changes the followers, whichever code path (or admin command) does it, and
-- a fan-out to 3,000 hosts reads 3,000 rows instead of scanning the
-- followers table 3,000 times. No row means the empty set (32 zero bytes).
--
-- herald_id_digest(text) (SHA-256 of the id) and herald_xor32(blob, blob)
-- are Go functions the store registers on every connection it opens
-- (store/followers_sync.go); a tool that opens this file without them cannot
-- change the followers table.
CREATE TABLE follower_digests (
	actor_id INTEGER NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	origin   TEXT    NOT NULL,                     -- scheme://host[:port], as followers.origin
	digest   BLOB    NOT NULL,                     -- 32 bytes
	PRIMARY KEY (actor_id, origin)
) STRICT, WITHOUT ROWID;

INSERT INTO follower_digests(actor_id, origin, digest)
	SELECT actor_id, origin, herald_id_digest(follower) FROM followers WHERE state = 'accepted'
	ON CONFLICT(actor_id, origin) DO UPDATE SET digest = herald_xor32(digest, excluded.digest);

CREATE TRIGGER follower_digests_insert AFTER INSERT ON followers WHEN NEW.state = 'accepted'
BEGIN
	INSERT INTO follower_digests(actor_id, origin, digest) VALUES (NEW.actor_id, NEW.origin, herald_id_digest(NEW.follower))
		ON CONFLICT(actor_id, origin) DO UPDATE SET digest = herald_xor32(digest, excluded.digest);
END;

CREATE TRIGGER follower_digests_delete AFTER DELETE ON followers WHEN OLD.state = 'accepted'
BEGIN
	UPDATE follower_digests SET digest = herald_xor32(digest, herald_id_digest(OLD.follower))
		WHERE actor_id = OLD.actor_id AND origin = OLD.origin;
	-- An origin whose last follower left holds nothing worth keeping.
	DELETE FROM follower_digests WHERE actor_id = OLD.actor_id AND origin = OLD.origin AND digest = zeroblob(32);
END;

-- An approval (pending to accepted) adds the follower; a change of any keyed
-- column takes the old row out and puts the new one in.
CREATE TRIGGER follower_digests_update AFTER UPDATE OF actor_id, follower, origin, state ON followers
BEGIN
	UPDATE follower_digests SET digest = herald_xor32(digest, herald_id_digest(OLD.follower))
		WHERE OLD.state = 'accepted' AND actor_id = OLD.actor_id AND origin = OLD.origin;
	INSERT INTO follower_digests(actor_id, origin, digest)
		SELECT NEW.actor_id, NEW.origin, herald_id_digest(NEW.follower) WHERE NEW.state = 'accepted'
		ON CONFLICT(actor_id, origin) DO UPDATE SET digest = herald_xor32(digest, excluded.digest);
	DELETE FROM follower_digests WHERE actor_id = OLD.actor_id AND origin = OLD.origin AND digest = zeroblob(32);
END;

-- Deliveries of an activity addressed to the sender's followers carry the
-- Collection-Synchronization header; set at enqueue.
ALTER TABLE activities ADD COLUMN sync_followers INTEGER NOT NULL DEFAULT 0;

-- Syncs requested by a received header whose digest did not match ours: at
-- most one per remote actor, and (through requested_at) at most one an hour.
-- A row stays after its run (done_at set) so the hour can be enforced; the
-- worker deletes rows done more than an hour ago.
CREATE TABLE followers_sync_jobs (
	remote_actor TEXT    PRIMARY KEY,              -- the actor whose followers collection we check
	url          TEXT    NOT NULL,                 -- its partial collection (the header's url)
	digest       TEXT    NOT NULL,                 -- the digest the header carried, hex
	requested_at INTEGER NOT NULL,                 -- unix seconds
	done_at      INTEGER,                          -- NULL while it waits to run
	result       TEXT                              -- what the run did, for the operator
) STRICT, WITHOUT ROWID;

CREATE INDEX followers_sync_jobs_due ON followers_sync_jobs(requested_at) WHERE done_at IS NULL;
