-- Generated from store/schema/0012_media.sql by `go generate ./store`: edit that file.
-- Files local actors uploaded (images, short video and audio), kept in the
-- media folder beside the database (herald.db-media/) and served at
-- /media/{file}. Times are unix seconds.
CREATE TABLE media (
	id          INTEGER  PRIMARY KEY,
	actor_id    INTEGER  NOT NULL REFERENCES actors(id),
	file        TEXT    NOT NULL UNIQUE,        -- name in the folder: random, with the type's extension
	media_type  TEXT    NOT NULL,               -- sniffed from the bytes
	kind        TEXT    NOT NULL,               -- image, video, audio
	size        INTEGER  NOT NULL,
	width       INTEGER NOT NULL DEFAULT 0,
	height      INTEGER NOT NULL DEFAULT 0,
	blurhash    TEXT    NOT NULL DEFAULT '',
	description TEXT    NOT NULL DEFAULT '',    -- alt text
	object_id   INTEGER  REFERENCES objects(id), -- the post it is attached to; NULL until then
	created_at  INTEGER  NOT NULL,
	removed_at  INTEGER                          -- the file was deleted
) STRICT;

CREATE INDEX media_object ON media(object_id) WHERE object_id IS NOT NULL;
