-- Generated from store/schema/0001_actors.sql by `go generate ./store`: edit that file.
-- Local actors. The private key never leaves this table except to sign; the
-- bearer token is stored only as its SHA-256.
CREATE TABLE actors (
	id              INTEGER  PRIMARY KEY,
	name            TEXT    NOT NULL UNIQUE,           -- preferredUsername, [a-z0-9_]{1,30}
	type            TEXT    NOT NULL DEFAULT 'Person', -- Person | Service | Application | Group
	display_name    TEXT    NOT NULL DEFAULT '',
	summary         TEXT    NOT NULL DEFAULT '',
	manual_approval INTEGER NOT NULL DEFAULT 0,
	private_key_pem TEXT    NOT NULL,
	public_key_pem  TEXT    NOT NULL,
	token_hash      TEXT,                              -- hex SHA-256 of the bearer token
	created_at      INTEGER  NOT NULL,                  -- unix seconds
	deleted_at      INTEGER                             -- set by `herald actor delete`; the row keeps the key to sign the Delete
) STRICT;

CREATE UNIQUE INDEX actors_token_hash ON actors(token_hash) WHERE token_hash IS NOT NULL;

-- The instance actor (/actor) signs fetches on behalf of the server. One row.
CREATE TABLE instance_actor (
	id              INTEGER  PRIMARY KEY CHECK (id = 1),
	private_key_pem TEXT    NOT NULL,
	public_key_pem  TEXT    NOT NULL,
	created_at      INTEGER  NOT NULL
) STRICT;

-- Remote actors following a local actor.
CREATE TABLE followers (
	actor_id     INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	follower     TEXT    NOT NULL, -- remote actor id (IRI)
	host         TEXT    NOT NULL, -- lower-case host of follower, for domain blocks
	origin       TEXT    NOT NULL, -- scheme://host[:port] of follower, for FEP-8fcf
	inbox        TEXT    NOT NULL,
	shared_inbox TEXT,
	follow_id    TEXT,             -- id of the Follow activity, when it had one
	state        TEXT    NOT NULL CHECK (state IN ('pending', 'accepted')),
	created_at   INTEGER  NOT NULL,
	PRIMARY KEY (actor_id, follower)
) STRICT;

CREATE INDEX followers_follower ON followers(follower);
CREATE INDEX followers_host ON followers(host);
CREATE INDEX followers_origin ON followers(actor_id, origin);

-- Remote actors a local actor follows.
CREATE TABLE following (
	actor_id   INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	target     TEXT    NOT NULL, -- remote actor id (IRI)
	host       TEXT    NOT NULL, -- lower-case host of target, for domain blocks
	follow_id  TEXT    NOT NULL, -- id of the Follow we sent
	state      TEXT    NOT NULL CHECK (state IN ('pending', 'accepted')),
	created_at INTEGER  NOT NULL,
	PRIMARY KEY (actor_id, target)
) STRICT;

CREATE INDEX following_target ON following(target);
CREATE INDEX following_host ON following(host);
CREATE UNIQUE INDEX following_follow_id ON following(follow_id);
