-- Profile fields, avatar, header, memorial; pinned posts (sqlite/0010).
ALTER TABLE actors ADD COLUMN fields     TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE actors ADD COLUMN avatar_url TEXT    NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN header_url TEXT    NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN memorial   BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE objects ADD COLUMN pinned_at BIGINT; -- unix seconds
CREATE INDEX objects_pinned ON objects(actor_id, pinned_at) WHERE pinned_at IS NOT NULL;
