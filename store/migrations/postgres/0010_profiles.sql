-- Generated from store/schema/0010_profiles.sql by `go generate ./store`: edit that file.
-- Profile fields Mastodon shows: PropertyValue fields, avatar and header
-- images (URLs), and the memorial flag; pinned posts (the featured
-- collection).
ALTER TABLE actors ADD COLUMN fields     TEXT    NOT NULL DEFAULT '[]'; -- JSON [{"name": ..., "value": ...}], value in plain text
ALTER TABLE actors ADD COLUMN avatar_url TEXT    NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN header_url TEXT    NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN memorial   BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE objects ADD COLUMN pinned_at BIGINT;  -- unix seconds; set while the object is in the featured collection
CREATE INDEX objects_pinned ON objects(actor_id, pinned_at) WHERE pinned_at IS NOT NULL;
