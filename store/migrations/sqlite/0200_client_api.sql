-- Generated from store/schema/0200_client_api.sql by `go generate ./store`: edit that file.
-- The Mastodon client API (mastoapi/): OAuth 2 apps, their tokens and
-- authorization codes, the passwords people log in with, the ids the API
-- shows for accounts, mutes and timeline markers. Every secret (client
-- secret, token, code, password) is stored only as a hash: SHA-256 of 256
-- random bits for the first three, bcrypt for passwords. Times are unix
-- milliseconds.

-- Apps registered with POST /api/v1/apps.
CREATE TABLE oauth_apps (
	id            INTEGER  PRIMARY KEY,
	client_id     TEXT    NOT NULL UNIQUE,          -- public
	secret_hash   TEXT    NOT NULL,                 -- hex SHA-256 of the client secret
	name          TEXT    NOT NULL,
	website       TEXT    NOT NULL DEFAULT '',
	redirect_uris TEXT    NOT NULL,                 -- one a line, as registered
	scopes        TEXT    NOT NULL,                 -- space-separated
	created_at    INTEGER  NOT NULL
) STRICT;

-- Access tokens. actor_id is NULL for an app's own token (client_credentials).
CREATE TABLE oauth_tokens (
	id           INTEGER  PRIMARY KEY,
	token_hash   TEXT    NOT NULL UNIQUE,           -- hex SHA-256 of the bearer token
	app_id       INTEGER  NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
	actor_id     INTEGER  REFERENCES actors(id) ON DELETE CASCADE,
	scopes       TEXT    NOT NULL,
	created_at   INTEGER  NOT NULL,
	last_used_at INTEGER  NOT NULL                   -- updated at most once an hour
) STRICT;

CREATE INDEX oauth_tokens_actor ON oauth_tokens(actor_id) WHERE actor_id IS NOT NULL;

-- Authorization codes, used once within ten minutes.
CREATE TABLE oauth_codes (
	code_hash      TEXT    PRIMARY KEY,             -- hex SHA-256 of the code
	app_id         INTEGER  NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
	actor_id       INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	redirect_uri   TEXT    NOT NULL,
	scopes         TEXT    NOT NULL,
	code_challenge TEXT    NOT NULL DEFAULT '',     -- PKCE S256 challenge, '' without PKCE
	expires_at     INTEGER  NOT NULL
) STRICT;

-- The password a person logs in to a local actor with (herald actor password).
CREATE TABLE actor_passwords (
	actor_id      INTEGER  PRIMARY KEY REFERENCES actors(id) ON DELETE CASCADE,
	password_hash TEXT    NOT NULL,                 -- bcrypt
	set_at        INTEGER  NOT NULL
) STRICT;

-- The id the API shows for an account, local or remote: a time-ordered
-- snowflake (milliseconds << 16 | 16 random bits), given the first time
-- the API shows the account.
CREATE TABLE account_ids (
	id         INTEGER  PRIMARY KEY,
	iri        TEXT    NOT NULL UNIQUE,             -- the actor's id
	created_at INTEGER  NOT NULL
) STRICT;

-- Accounts a local actor mutes (POST /api/v1/accounts/:id/mute). Nothing is
-- sent: a mute is private.
CREATE TABLE mutes (
	id            INTEGER  PRIMARY KEY,              -- snowflake, the pagination key
	actor_id      INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	target        TEXT    NOT NULL,                 -- the muted actor's id
	notifications INTEGER NOT NULL DEFAULT 1,    -- mute its notifications too
	expires_at    INTEGER,                           -- NULL: until unmuted
	created_at    INTEGER  NOT NULL,
	UNIQUE (actor_id, target)
) STRICT;

-- Where a person stopped reading (GET/POST /api/v1/markers).
CREATE TABLE markers (
	actor_id     INTEGER  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	timeline     TEXT    NOT NULL CHECK (timeline IN ('home', 'notifications')),
	last_read_id TEXT    NOT NULL,
	version      INTEGER  NOT NULL DEFAULT 0,
	updated_at   INTEGER  NOT NULL,
	PRIMARY KEY (actor_id, timeline)
) STRICT;

-- An upload that is an actor's avatar or header (update_credentials) is
-- kept while it is one, though no post attaches it.
ALTER TABLE media ADD COLUMN profile_of INTEGER REFERENCES actors(id);

-- Whether the actor lets directories and search list it (toot:discoverable
-- in its document; update_credentials' discoverable).
ALTER TABLE actors ADD COLUMN discoverable INTEGER NOT NULL DEFAULT 1;
