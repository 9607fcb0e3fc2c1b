-- Generated from store/schema/0550_purge_indexes.sql by `go generate ./store`: edit that file.
-- Indexes for the purge of a local actor deleted at the end of its
-- suspension (store/suspension_purge.go purgeSteps, ReleaseActorMedia,
-- PurgeActorStep's last statements): each statement below filters by a
-- column no index began with, so every batch scanned the whole table,
-- with nothing of the actor left in it too (180-235 ms a batch on SQLite
-- next to another actor with 500,000 rows in each of activities, objects
-- and notifications). Each index is named with the statement that uses it.
--
-- activities_actor: the "activities" step (actor_id = $1; the outbox
-- index is partial, in_outbox only).
CREATE INDEX activities_actor ON activities(actor_id);
-- objects_actor: the "objects" step and the joins of "object_tags",
-- "quote_authorizations" and "interaction_requests" (o.actor_id = $1; the
-- pinned index is partial).
CREATE INDEX objects_actor ON objects(actor_id);
-- object_tags_object: "object_tags" joins objects to its tags by
-- object_id (the key begins with tag), as objects' cascades do.
CREATE INDEX object_tags_object ON object_tags(object_id);
-- notifications_account: the "notifications" step of what the actor
-- caused (account = $1).
CREATE INDEX notifications_account ON notifications(account);
-- status_reactions_account: "status_reactions" (account = $1).
CREATE INDEX status_reactions_account ON status_reactions(account);
-- poll_votes_voter: "poll_votes" (voter = $1; the key begins with
-- status_id).
CREATE INDEX poll_votes_voter ON poll_votes(voter);
-- inbox_recipients_item: "inbox_items" looks for another recipient of
-- each item (o.item_id = r.item_id), and deleting an item cascades to
-- its recipients by item_id (the key begins with actor_id).
CREATE INDEX inbox_recipients_item ON inbox_recipients(item_id);
-- api_events_actor: "api_events" (actor_id = $1).
CREATE INDEX api_events_actor ON api_events(actor_id);
-- oauth_codes_actor: "oauth_codes" (actor_id = $1).
CREATE INDEX oauth_codes_actor ON oauth_codes(actor_id);
-- webhook_events_actor: both "webhook_events" and the "webhook_deliveries"
-- of its events (e.actor_id = $1).
CREATE INDEX webhook_events_actor ON webhook_events(actor_id);
-- interaction_approvals_actor: "interaction_approvals" (actor_id = $1).
CREATE INDEX interaction_approvals_actor ON interaction_approvals(actor_id);
-- jobs_actor: "jobs" (actor_id = $1).
CREATE INDEX jobs_actor ON jobs(actor_id);
-- media_actor: ReleaseActorMedia (actor_id = $2) and DeleteReleasedMedia.
CREATE INDEX media_actor ON media(actor_id, id);
-- media_profile: the purge's last step lets go of the actor's avatar and
-- header (profile_of = $1); few uploads are one.
CREATE INDEX media_profile ON media(profile_of) WHERE profile_of IS NOT NULL;
