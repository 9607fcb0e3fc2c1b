-- Generated from store/schema/0061_actor_domain_blocks.sql by `go generate ./store`: edit that file.
-- Domains a local actor blocks (the app API): nothing from the domain reaches
-- the actor's inbox or webhooks, its Follows are refused, and the actor's
-- activities are not delivered there. The operator's blocked_domains is the
-- instance-wide list; this one is the actor's own. Unix seconds.
CREATE TABLE actor_domain_blocks (
	actor_id   BIGINT  NOT NULL REFERENCES actors(id) ON DELETE CASCADE,
	domain     TEXT    NOT NULL, -- host name, as NormalizeDomain gives it
	created_at BIGINT  NOT NULL,
	PRIMARY KEY (actor_id, domain)
);

-- The inbox asks which local actors block a sender, by the sender's id or
-- host: once per activity, whatever the number of recipients.
CREATE INDEX actor_domain_blocks_domain ON actor_domain_blocks(domain);
CREATE INDEX actor_blocks_target ON actor_blocks(target);
