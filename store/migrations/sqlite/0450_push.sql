-- Generated from store/schema/0450_push.sql by `go generate ./store`: edit that file.
-- Web Push (issue 28 part 3): the client API's push subscriptions, one
-- per access token as Mastodon keeps them (a new POST replaces it; the
-- token's revocation ends it), and the instance's VAPID key pair.

CREATE TABLE push_subscriptions (
	id         INTEGER  PRIMARY KEY,
	token_id   INTEGER  NOT NULL UNIQUE REFERENCES oauth_tokens(id) ON DELETE CASCADE,
	actor_id   INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	endpoint   TEXT    NOT NULL,
	p256dh     BLOB   NOT NULL,                -- the subscriber's P-256 public key, 65 bytes
	auth       BLOB   NOT NULL,                -- its authentication secret, 16 bytes
	standard   INTEGER NOT NULL DEFAULT 0,  -- the app asked for RFC 8291 (Mastodon 4.4's standard)
	alerts     TEXT    NOT NULL DEFAULT '',     -- the notification types pushed, comma-separated
	policy     TEXT    NOT NULL DEFAULT 'all',  -- all, followed, follower, none
	created_at INTEGER  NOT NULL
) STRICT;

CREATE INDEX push_subscriptions_actor ON push_subscriptions(actor_id);

-- The VAPID key pair (RFC 8292), made once by the first process that
-- needs it; apps get the public key as the instance's vapid_key.
CREATE TABLE vapid_keys (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	private_key BLOB   NOT NULL,                -- the P-256 private scalar, 32 bytes
	public_key  TEXT    NOT NULL,                -- as apps are shown it
	created_at  INTEGER  NOT NULL
) STRICT;
