-- Generated from store/schema/0005_actor_blocks.sql by `go generate ./store`: edit that file.
-- Remote actors a local actor blocked (through its outbox): their Follows
-- are answered with a Reject.
CREATE TABLE actor_blocks (
	actor_id   INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	target     TEXT    NOT NULL,
	created_at INTEGER  NOT NULL,
	PRIMARY KEY (actor_id, target)
) STRICT, WITHOUT ROWID;
