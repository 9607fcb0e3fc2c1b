-- Generated from store/schema/0004_deliveries.sql by `go generate ./store`: edit that file.
-- Activities Herald sends, stored once; deliveries reference them.
CREATE TABLE activities (
	id         INTEGER  PRIMARY KEY,
	iri        TEXT    NOT NULL UNIQUE,
	actor_id   INTEGER  REFERENCES actors(id) ON DELETE CASCADE, -- sender; NULL means the instance actor
	type       TEXT    NOT NULL,
	body       TEXT    NOT NULL,                                -- JSON as sent (bto and bcc stripped)
	object_iri TEXT,                                            -- the object it acts on, if any
	public     INTEGER NOT NULL DEFAULT 0,                  -- addressed to as:Public: served to anyone
	in_outbox  INTEGER NOT NULL DEFAULT 0,                  -- published by the actor (not an automatic Accept)
	idempotency_key TEXT,                                       -- the client's Idempotency-Key, if it sent one
	created_at INTEGER  NOT NULL
) STRICT;

CREATE INDEX activities_outbox ON activities(actor_id, id) WHERE in_outbox = 1;
CREATE INDEX activities_object ON activities(object_iri) WHERE object_iri IS NOT NULL;
CREATE UNIQUE INDEX activities_idempotency ON activities(actor_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Objects local actors published (Note, Article, ...), stored once. A
-- deleted object keeps its row as a Tombstone.
CREATE TABLE objects (
	id         INTEGER  PRIMARY KEY,
	iri        TEXT    NOT NULL UNIQUE,
	actor_id   INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	type       TEXT    NOT NULL,
	body       TEXT    NOT NULL, -- JSON as served (bto and bcc stripped)
	public     INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER  NOT NULL,
	updated_at INTEGER,
	deleted_at INTEGER
) STRICT;

-- One row per (activity, inbox). Times are unix milliseconds.
CREATE TABLE deliveries (
	id          INTEGER  PRIMARY KEY,
	activity_id INTEGER  NOT NULL REFERENCES activities(id) ON DELETE CASCADE,
	inbox       TEXT    NOT NULL,
	host        TEXT    NOT NULL,           -- host[:port] of inbox: per-host queues and breakers
	state       TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done', 'failed')),
	lane        INTEGER NOT NULL DEFAULT 0, -- 0 normal, 1 low priority (wide, cheap fan-outs)
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     INTEGER  NOT NULL,           -- when it is due
	lease_until INTEGER,                     -- while leased: when the lease expires
	enqueued_at INTEGER  NOT NULL,
	first_attempt_at INTEGER,
	updated_at  INTEGER  NOT NULL DEFAULT 0, -- last state change, for sweeps and the page
	last_status INTEGER,
	last_error  TEXT,
	UNIQUE (activity_id, inbox)
) STRICT;

CREATE INDEX deliveries_due ON deliveries(state, lane, next_at);
CREATE INDEX deliveries_host ON deliveries(host, state);

