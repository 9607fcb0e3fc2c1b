-- The hashtags of local objects (sqlite/0011).
CREATE TABLE object_tags (
	object_id BIGINT  NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
	tag       TEXT    NOT NULL,
	PRIMARY KEY (tag, object_id)
);
