-- Generated from store/schema/0071_moves.sql by `go generate ./store`: edit that file.
-- Account moves (FEP-7628, Mastodon's Move): the accounts elsewhere that
-- may move to a local actor (alsoKnownAs), and where a local actor moved
-- (movedTo; a moved actor refuses new followers).
ALTER TABLE actors ADD COLUMN also_known_as TEXT NOT NULL DEFAULT '[]'; -- JSON array of actor ids
ALTER TABLE actors ADD COLUMN moved_to      TEXT;                       -- the actor id it moved to
