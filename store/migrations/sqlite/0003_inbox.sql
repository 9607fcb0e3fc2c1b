-- Generated from store/schema/0003_inbox.sql by `go generate ./store`: edit that file.
-- Domains whose servers Herald refuses to talk to, in either direction.
-- Exact host match (no wildcard subdomains).
CREATE TABLE blocked_domains (
	domain     TEXT    PRIMARY KEY, -- lower-case host name, no port
	reason     TEXT    NOT NULL DEFAULT '',
	created_at INTEGER  NOT NULL
) STRICT;

-- Replay defence: the id of every activity the inbox accepted (or a hash of
-- the body for one without id). Swept after 30 days; the signature date
-- window rejects older replays anyway.
CREATE TABLE processed_activities (
	id          TEXT    PRIMARY KEY,
	received_at INTEGER  NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX processed_activities_received ON processed_activities(received_at);

-- What arrived for apps to read: each activity stored once, with one
-- recipient row per local actor it was for.
CREATE TABLE inbox_items (
	id          INTEGER  PRIMARY KEY,
	iri         TEXT,             -- activity id (NULL when it had none)
	type        TEXT    NOT NULL,
	actor       TEXT    NOT NULL, -- remote actor id
	object      TEXT,             -- id of the activity's object, for Delete
	body        TEXT    NOT NULL, -- the activity JSON as received
	received_at INTEGER  NOT NULL,
	deleted_at  INTEGER            -- set when its object was deleted
) STRICT;

CREATE INDEX inbox_items_object ON inbox_items(object) WHERE object IS NOT NULL;

CREATE TABLE inbox_recipients (
	actor_id INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	item_id  INTEGER  NOT NULL REFERENCES inbox_items(id) ON DELETE CASCADE,
	PRIMARY KEY (actor_id, item_id)
) STRICT, WITHOUT ROWID;

-- What Herald knows about each remote host (host[:port]): evidence that it
-- is alive (the inbox) and whether deliveries to it are worth trying (the
-- delivery scheduler). See outbox/delivery/hosts.go for the rules.
CREATE TABLE hosts (
	host              TEXT    PRIMARY KEY,
	last_inbound_at   INTEGER,                         -- last correctly signed request from it
	unavailable_since INTEGER,                         -- failing on 7 distinct days; deliveries skipped
	probation         INTEGER NOT NULL DEFAULT 0, -- unavailable, but it spoke to us: try again
	last_error        TEXT,
	last_failure_at   INTEGER
) STRICT, WITHOUT ROWID;

-- The UTC days on which deliveries to a host failed (retryable failures).
-- Cleared by any success.
CREATE TABLE host_failures (
	host TEXT    NOT NULL,
	day  INTEGER  NOT NULL, -- days since the Unix epoch
	PRIMARY KEY (host, day)
) STRICT, WITHOUT ROWID;
