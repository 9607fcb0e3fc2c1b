-- Generated from store/schema/0080_followers_inboxes.sql by `go generate ./store`: edit that file.
-- The inboxes a fan-out to an actor's followers goes to, in index order
-- (store.FollowerInboxes: SELECT DISTINCT coalesce(shared_inbox, inbox)).
-- Without it the query reads every follower row and sorts: 0.5 s of a
-- 30,000-inbox fan-out from 500,000 followers, half the enqueue
-- (docs/PERFORMANCE.md); with it, a scan of this index that skips
-- duplicates as it goes.
CREATE INDEX followers_inboxes ON followers(actor_id, state, (coalesce(shared_inbox, inbox)));
