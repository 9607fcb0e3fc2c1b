-- Generated from store/schema/0520_interaction_requests.sql by `go generate ./store`: edit that file.
-- Interaction policies (GoToSocial's interaction requests and approvals,
-- docs/federation/interaction_policy.md). interaction_requests are the
-- replies, Likes and Announces of local posts whose policy leaves them to
-- the author: held (pending) with the activity as received until the
-- author accepts (applied then, and the Accept's result is the approval
-- served at /users/{name}/approvals/{id}) or rejects them. A row accepted
-- at once is a preapproval (the interacting actor is in a collection the
-- policy names). Unix milliseconds.
CREATE TABLE interaction_requests (
	id          INTEGER PRIMARY KEY,
	object_id   INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE, -- the local post
	kind        TEXT   NOT NULL,             -- canReply, canLike, canAnnounce
	interaction TEXT   NOT NULL,             -- the reply's id, or the Like's / Announce's
	actor       TEXT   NOT NULL,             -- who interacted
	body        TEXT   NOT NULL,             -- the activity as received
	state       TEXT   NOT NULL DEFAULT 'pending', -- pending, accepted, rejected, withdrawn (undone or deleted while pending)
	created_at  INTEGER NOT NULL,
	decided_at  INTEGER,
	UNIQUE (object_id, interaction)
) STRICT;
CREATE INDEX interaction_requests_pending ON interaction_requests(object_id, state);

-- Local actors' interactions with peers' posts whose policy asks for the
-- author's approval: sent to the author alone and pending until its
-- server's Accept (approved_by, the result it names, then goes on the
-- interaction, sent again to its whole audience) or Reject.
CREATE TABLE interaction_approvals (
	id          INTEGER PRIMARY KEY,
	actor_id    INTEGER NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	kind        TEXT   NOT NULL,             -- canReply, canLike, canAnnounce
	interaction TEXT   NOT NULL UNIQUE,      -- the local reply's id, or the Like's / Announce's
	activity    TEXT   NOT NULL,             -- the local activity that carries it
	target      TEXT   NOT NULL,             -- the peer's post
	author      TEXT   NOT NULL,             -- its author, who approves
	state       TEXT   NOT NULL DEFAULT 'pending', -- pending, accepted, rejected
	approved_by TEXT   NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	decided_at  INTEGER
) STRICT;
