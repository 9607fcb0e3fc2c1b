-- Generated from store/schema/0011_object_tags.sql by `go generate ./store`: edit that file.
-- The hashtags of local objects, for the tag pages (/tags/{name}).
CREATE TABLE object_tags (
	object_id BIGINT  NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
	tag       TEXT    NOT NULL, -- normalized name, without '#'
	PRIMARY KEY (tag, object_id)
);
