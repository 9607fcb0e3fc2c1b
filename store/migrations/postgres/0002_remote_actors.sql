-- Cache of remote actors and their public keys (sqlite/0002). Times are
-- unix seconds.
CREATE TABLE remote_actors (
	id                 TEXT    PRIMARY KEY,
	inbox              TEXT    NOT NULL,
	shared_inbox       TEXT    NOT NULL DEFAULT '',
	followers          TEXT    NOT NULL DEFAULT '',
	preferred_username TEXT    NOT NULL,
	type               TEXT    NOT NULL,
	document           TEXT    NOT NULL,
	fetched_at         BIGINT  NOT NULL
);

CREATE TABLE remote_keys (
	key_id         TEXT    PRIMARY KEY,
	actor_id       TEXT    NOT NULL REFERENCES remote_actors(id) ON DELETE CASCADE,
	public_key_pem TEXT    NOT NULL,
	fetched_at     BIGINT  NOT NULL
);

CREATE INDEX remote_keys_actor ON remote_keys(actor_id);
