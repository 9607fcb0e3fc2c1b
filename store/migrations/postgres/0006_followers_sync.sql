-- FEP-8fcf followers synchronization (sqlite/0006). The digests are kept by
-- the store in Go, in the transaction that changes the followers, and
-- recomputed from the followers table at start and hourly (store/digests.go).
CREATE TABLE follower_digests (
	actor_id BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	origin   TEXT    NOT NULL,
	digest   BYTEA   NOT NULL,                     -- 32 bytes
	PRIMARY KEY (actor_id, origin)
);

ALTER TABLE activities ADD COLUMN sync_followers BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE followers_sync_jobs (
	remote_actor TEXT    PRIMARY KEY,
	url          TEXT    NOT NULL,
	digest       TEXT    NOT NULL,
	requested_at BIGINT  NOT NULL,                 -- unix seconds
	done_at      BIGINT,                           -- unix seconds
	result       TEXT
);

CREATE INDEX followers_sync_jobs_due ON followers_sync_jobs(requested_at) WHERE done_at IS NULL;
