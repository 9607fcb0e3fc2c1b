-- Generated from store/schema/0540_interaction_blind.sql by `go generate ./store`: edit that file.
-- A local actor's pending interaction with a peer's post keeps the
-- recipients its activity named in bto and bcc (a JSON array of ids):
-- the stored activity loses them (delivery strips them before anything
-- is sent or kept), so its approval can reach them only from here.
-- The index finds the pending interaction an activity carries, for the
-- object and activity documents served at their ids (404 while pending).
ALTER TABLE interaction_approvals ADD COLUMN blind TEXT NOT NULL DEFAULT '[]';
CREATE INDEX interaction_approvals_activity ON interaction_approvals(activity);
