-- Domains a local actor blocks (sqlite/0061, the app API), and the index the
-- inbox's "which local actors block this sender" query uses. Unix seconds.
CREATE TABLE actor_domain_blocks (
	actor_id   BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	domain     TEXT    NOT NULL,
	created_at BIGINT  NOT NULL,
	PRIMARY KEY (actor_id, domain)
);

CREATE INDEX actor_domain_blocks_domain ON actor_domain_blocks(domain);
CREATE INDEX actor_blocks_target ON actor_blocks(target);
