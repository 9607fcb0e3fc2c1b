-- Generated from store/schema/0070_relays.sql by `go generate ./store`: edit that file.
-- Relays (FEP-ae0c): the instance actor's subscriptions. A Mastodon-style
-- relay is followed with a Follow of as:Public sent to its inbox, a
-- LitePub-style one with a Follow of its actor. Public posts of local
-- actors go to the inbox of every accepted relay; what a relay forwards is
-- kept once in the relay feed (inbox_items.relayed). Times are unix
-- milliseconds.
CREATE TABLE relays (
	id         INTEGER  PRIMARY KEY,
	url        TEXT    NOT NULL UNIQUE, -- as the operator gave it (an inbox or an actor URL)
	style      TEXT    NOT NULL CHECK (style IN ('mastodon', 'litepub')),
	inbox      TEXT    NOT NULL,        -- where the Follow, the Undo and the public posts go
	host       TEXT    NOT NULL,        -- host[:port] of inbox: who may answer the Follow
	actor      TEXT,                    -- the relay's actor: from its document (litepub) or its Accept (mastodon)
	follow_id  TEXT    NOT NULL UNIQUE, -- the id of the instance actor's Follow
	state      TEXT    NOT NULL CHECK (state IN ('pending', 'accepted', 'rejected')),
	created_at INTEGER  NOT NULL,
	updated_at INTEGER  NOT NULL
) STRICT;

CREATE INDEX relays_actor ON relays(actor) WHERE actor IS NOT NULL;

-- What an accepted relay forwarded, and the Updates, Deletes and Undos
-- applied to it: the relay feed, GET /actor/inbox.
ALTER TABLE inbox_items ADD COLUMN relayed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX inbox_items_relayed ON inbox_items(relayed, id);

-- Jobs of the instance actor (relay add and remove) have no local actor:
-- actor_id becomes nullable. SQLite changes a column only by rebuilding its
-- table (the wake triggers of 0009 are PostgreSQL's, which alters it).
CREATE TABLE jobs_new (
	id          INTEGER PRIMARY KEY,
	kind        TEXT    NOT NULL,
	actor_id    INTEGER REFERENCES actors(id), -- NULL: the instance actor
	args        TEXT    NOT NULL,
	state       TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
	lease_owner TEXT,
	lease_until INTEGER,
	attempts    INTEGER NOT NULL DEFAULT 0,
	result      TEXT,
	error       TEXT,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;
INSERT INTO jobs_new(id, kind, actor_id, args, state, lease_owner, lease_until, attempts, result, error, created_at, updated_at)
	SELECT id, kind, actor_id, args, state, lease_owner, lease_until, attempts, result, error, created_at, updated_at FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_state ON jobs(state, id);
