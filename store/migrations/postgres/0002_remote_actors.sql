-- Generated from store/schema/0002_remote_actors.sql by `go generate ./store`: edit that file.
-- Cache of remote actors and their public keys. Rows are re-fetched when
-- older than the fetcher's TTL; losing the whole cache only costs fetches.
-- Times are unix seconds.
CREATE TABLE remote_actors (
	id                 TEXT    PRIMARY KEY,         -- actor id (IRI), equal to the URL it was fetched from
	inbox              TEXT    NOT NULL,
	shared_inbox       TEXT    NOT NULL DEFAULT '', -- endpoints.sharedInbox, '' when none
	followers          TEXT    NOT NULL DEFAULT '',
	preferred_username TEXT    NOT NULL,
	type               TEXT    NOT NULL,            -- Person | Service | Application | Group | Organization
	document           TEXT    NOT NULL,            -- the validated (normalised) actor JSON
	fetched_at         BIGINT  NOT NULL
);

-- Keys by key id. An actor's embedded keys are replaced on every refetch, so
-- a rotated-out key stops verifying as soon as the actor is refreshed.
CREATE TABLE remote_keys (
	key_id         TEXT    PRIMARY KEY,
	actor_id       TEXT    NOT NULL REFERENCES remote_actors(id) ON DELETE CASCADE,
	public_key_pem TEXT    NOT NULL,
	fetched_at     BIGINT  NOT NULL
);

CREATE INDEX remote_keys_actor ON remote_keys(actor_id);
