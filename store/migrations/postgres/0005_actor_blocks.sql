-- Remote actors a local actor blocked (sqlite/0005).
CREATE TABLE actor_blocks (
	actor_id   BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	target     TEXT    NOT NULL,
	created_at BIGINT  NOT NULL,                   -- unix seconds
	PRIMARY KEY (actor_id, target)
);
