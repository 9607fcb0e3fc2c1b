-- Generated from store/schema/0400_statuses.sql by `go generate ./store`: edit that file.
-- What people read in Mastodon apps (timeline/, mastoapi/): statuses, local
-- and remote, with the state the inbox and outbox apply to them; the home
-- feeds they fan out to on arrival; notifications; favourites, bookmarks,
-- reactions, polls, lists, conversations; and the events the streaming API
-- (issue 28 part 3) reads. Times are unix milliseconds. Ids the API shows
-- are snowflakes (store.Snowflake) of the row's time, so pages are range
-- scans on the primary key.

-- Every status the API can show: a local post (local_actor_id set), a
-- remote one that arrived or was fetched, or a boost (reblog_iri set; its
-- iri is the Announce's, reblog_of the boosted status once Herald has it).
CREATE TABLE statuses (
	id                 BIGINT  PRIMARY KEY,             -- snowflake of published, clamped to now
	iri                TEXT    NOT NULL UNIQUE,         -- the object's id (a boost: the Announce's)
	url                TEXT    NOT NULL DEFAULT '',     -- its page, '' for the iri
	author             TEXT    NOT NULL,                -- the actor's id
	local_actor_id     BIGINT  REFERENCES actors(id) ON DELETE CASCADE,
	reblog_iri         TEXT,                            -- a boost: what it boosts
	reblog_of          BIGINT,                          -- a boost: that status, NULL until Herald has it
	in_reply_to        TEXT,                            -- the id of what it answers
	in_reply_to_author TEXT,                            -- who wrote that, when known
	thread             TEXT    NOT NULL DEFAULT '',     -- its conversation: context, conversation or the root's id
	visibility         TEXT    NOT NULL CHECK (visibility IN ('public', 'unlisted', 'private', 'direct')),
	reply              BOOLEAN NOT NULL DEFAULT false,  -- answers someone else (public timelines leave it out)
	has_media          BOOLEAN NOT NULL DEFAULT false,
	sensitive          BOOLEAN NOT NULL DEFAULT false,
	spoiler_text       TEXT    NOT NULL DEFAULT '',
	content            TEXT    NOT NULL DEFAULT '',     -- sanitised HTML
	language           TEXT    NOT NULL DEFAULT '',
	body               TEXT    NOT NULL DEFAULT '',     -- the object as it stands, JSON ('' for a boost, and once deleted)
	source             TEXT    NOT NULL DEFAULT '',     -- a local post's text as written
	created_at         BIGINT  NOT NULL,
	edited_at          BIGINT,
	deleted_at         BIGINT,
	replies_count      INTEGER NOT NULL DEFAULT 0,
	reblogs_count      INTEGER NOT NULL DEFAULT 0,
	favourites_count   INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX statuses_author ON statuses(author, id);
CREATE INDEX statuses_reblog_iri ON statuses(reblog_iri) WHERE reblog_iri IS NOT NULL;
CREATE INDEX statuses_reblog_of ON statuses(reblog_of) WHERE reblog_of IS NOT NULL;
CREATE INDEX statuses_in_reply_to ON statuses(in_reply_to) WHERE in_reply_to IS NOT NULL;
CREATE INDEX statuses_thread ON statuses(thread) WHERE visibility = 'direct';
-- The public timelines: public, not boosts, not replies to others.
CREATE INDEX statuses_public ON statuses(id) WHERE visibility = 'public' AND reblog_iri IS NULL AND NOT reply AND deleted_at IS NULL;

-- The home feeds, filled on arrival (fan-out on write): the first page of
-- a person's home timeline is one range scan of this primary key.
CREATE TABLE home_feed (
	actor_id  BIGINT NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	status_id BIGINT NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	PRIMARY KEY (actor_id, status_id)
);

CREATE INDEX home_feed_status ON home_feed(status_id);

-- Hashtags of statuses (normalised names), for the tag timelines.
CREATE TABLE status_tags (
	tag       TEXT   NOT NULL,
	status_id BIGINT NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	PRIMARY KEY (tag, status_id)
);

CREATE INDEX status_tags_status ON status_tags(status_id);

-- The local actors a status names (addressed or mentioned): who may see a
-- private or direct one besides the author's followers.
CREATE TABLE status_audience (
	status_id BIGINT NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	actor_id  BIGINT NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	PRIMARY KEY (status_id, actor_id)
);

CREATE INDEX status_audience_actor ON status_audience(actor_id, status_id);

-- Likes of statuses, local and remote (favourited_by, the favourites list).
CREATE TABLE favourites (
	id        BIGINT PRIMARY KEY,                       -- snowflake, the pagination key
	status_id BIGINT NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	account   TEXT   NOT NULL,                          -- who liked it (actor id)
	activity  TEXT   NOT NULL DEFAULT '',               -- the Like's id, for its Undo
	UNIQUE (status_id, account)
);

CREATE INDEX favourites_account ON favourites(account, id);
CREATE INDEX favourites_activity ON favourites(activity) WHERE activity <> '';

-- Emoji reactions (EmojiReact, as Pleroma, Akkoma and Misskey send them).
CREATE TABLE status_reactions (
	id        BIGINT PRIMARY KEY,
	status_id BIGINT NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	account   TEXT   NOT NULL,
	emoji     TEXT   NOT NULL,                          -- a Unicode emoji, or :name:
	emoji_url TEXT   NOT NULL DEFAULT '',               -- a custom emoji's image
	activity  TEXT   NOT NULL DEFAULT '',
	UNIQUE (status_id, account, emoji)
);

CREATE INDEX status_reactions_activity ON status_reactions(activity) WHERE activity <> '';

-- A local actor's bookmarks (private: nothing is sent).
CREATE TABLE bookmarks (
	id        BIGINT PRIMARY KEY,
	actor_id  BIGINT NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	status_id BIGINT NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	UNIQUE (actor_id, status_id)
);

CREATE INDEX bookmarks_actor ON bookmarks(actor_id, id);

-- Notifications of local actors. group_key is Mastodon's (favourite and
-- reblog of one status, and follows, within 12 hours); NULL: ungrouped.
CREATE TABLE notifications (
	id         BIGINT  PRIMARY KEY,
	actor_id   BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	type       TEXT    NOT NULL,
	account    TEXT    NOT NULL,                        -- who did it (actor id)
	status_id  BIGINT  REFERENCES statuses(id) ON DELETE CASCADE,
	activity   TEXT    NOT NULL DEFAULT '',             -- what caused it: its Undo takes it back
	group_key  TEXT,
	emoji      TEXT    NOT NULL DEFAULT '',
	emoji_url  TEXT    NOT NULL DEFAULT '',
	created_at BIGINT  NOT NULL
);

CREATE INDEX notifications_actor ON notifications(actor_id, id);
CREATE INDEX notifications_group ON notifications(actor_id, group_key, id) WHERE group_key IS NOT NULL;
CREATE INDEX notifications_activity ON notifications(activity) WHERE activity <> '';
CREATE INDEX notifications_status ON notifications(status_id) WHERE status_id IS NOT NULL;

-- Polls (a Question), local or remote. options is JSON: [{"title", "votes"}].
CREATE TABLE polls (
	status_id    BIGINT  PRIMARY KEY REFERENCES statuses(id) ON DELETE CASCADE,
	multiple     BOOLEAN NOT NULL DEFAULT false,
	expires_at   BIGINT,                                -- NULL: open until closed
	closed_at    BIGINT,                                -- a remote poll said it closed
	options      TEXT    NOT NULL,
	voters_count INTEGER,                               -- NULL when its server does not say
	notified_at  BIGINT                                 -- the poll notifications went out
);

CREATE INDEX polls_expiry ON polls(expires_at) WHERE notified_at IS NULL AND expires_at IS NOT NULL;

-- Votes: a local actor's on any poll, a remote one's on a local poll.
CREATE TABLE poll_votes (
	status_id  BIGINT  NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	voter      TEXT    NOT NULL,                        -- actor id
	choice     INTEGER NOT NULL,
	activity   TEXT    NOT NULL DEFAULT '',             -- the vote's Note
	created_at BIGINT  NOT NULL,
	PRIMARY KEY (status_id, voter, choice)
);

-- Lists of accounts a local actor follows (their own timelines).
CREATE TABLE lists (
	id             BIGINT  PRIMARY KEY,
	actor_id       BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	title          TEXT    NOT NULL,
	replies_policy TEXT    NOT NULL DEFAULT 'list' CHECK (replies_policy IN ('followed', 'list', 'none')),
	exclusive      BOOLEAN NOT NULL DEFAULT false,
	created_at     BIGINT  NOT NULL
);

CREATE INDEX lists_actor ON lists(actor_id, id);

CREATE TABLE list_accounts (
	list_id BIGINT NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
	account TEXT   NOT NULL,
	PRIMARY KEY (list_id, account)
);

CREATE INDEX list_accounts_account ON list_accounts(account);

-- Direct conversations as each participant sees them.
CREATE TABLE conversations (
	id             BIGINT  PRIMARY KEY,
	actor_id       BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	thread         TEXT    NOT NULL,
	last_status_id BIGINT  NOT NULL REFERENCES statuses(id) ON DELETE CASCADE,
	unread         BOOLEAN NOT NULL DEFAULT false,
	UNIQUE (actor_id, thread)
);

CREATE INDEX conversations_actor ON conversations(actor_id, last_status_id);

-- The accounts whose new posts a local actor is notified of (follow with
-- notify=true); private, nothing is sent.
CREATE TABLE follow_notify (
	actor_id BIGINT NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	target   TEXT   NOT NULL,
	PRIMARY KEY (actor_id, target)
);

-- What Herald learnt of a remote account when an app first opened it: the
-- counts its collections give, and when its outbox's first page was read.
CREATE TABLE remote_accounts (
	iri             TEXT    PRIMARY KEY,
	statuses_count  INTEGER NOT NULL DEFAULT 0,
	followers_count INTEGER NOT NULL DEFAULT 0,
	following_count INTEGER NOT NULL DEFAULT 0,
	fetched_at      BIGINT  NOT NULL
);

-- Boosts whose status Herald could not fetch yet: tried again when a
-- timeline shows them, a few times.
CREATE TABLE status_fetches (
	iri      TEXT    PRIMARY KEY,
	attempts INTEGER NOT NULL DEFAULT 0,
	tried_at BIGINT  NOT NULL
);

-- Something happened for a local actor (or, actor_id NULL, on a public
-- stream): the streaming API reads these (issue 28 part 3). Kept an hour.
CREATE TABLE api_events (
	id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	actor_id        BIGINT,                             -- NULL: public, public:local, public:remote, hashtag
	stream          TEXT   NOT NULL,                    -- user, public, public:local, public:remote, hashtag, list, direct
	event           TEXT   NOT NULL,                    -- update, notification, delete, status.update, conversation
	status_id       BIGINT,
	notification_id BIGINT,
	detail          TEXT   NOT NULL DEFAULT '',         -- the hashtag, the list id, the conversation id
	created_at      BIGINT NOT NULL
);

CREATE INDEX api_events_created ON api_events(created_at);

-- The focal point of an upload (the API's focus), "x,y" in [-1, 1].
ALTER TABLE media ADD COLUMN focus TEXT NOT NULL DEFAULT '';

-- Events wake the serving processes as new deliveries do.
CREATE TRIGGER api_events_wake AFTER INSERT ON api_events
	FOR EACH STATEMENT EXECUTE FUNCTION herald_wake();
