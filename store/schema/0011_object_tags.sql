-- The hashtags of local objects, for the tag pages (/tags/{name}).
CREATE TABLE object_tags (
	object_id BIGINT  NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
	tag       TEXT    NOT NULL, -- normalized name, without '#'
	PRIMARY KEY (tag, object_id)
) WITHOUT ROWID;
