-- Generated from store/schema/0050_federation_policy.sql by `go generate ./store`: edit that file.
-- Federation policy (store/policy.go): whom Herald federates with.
--
-- In blocklist mode (the default) every host but the blocked ones; in
-- allowlist mode only the hosts on the allowlist, and of those not the
-- blocked ones. An entry covers the domain and every subdomain of it. The
-- mode is recorded by `herald serve --federation-mode`, so every process and
-- every command reads the same one.
ALTER TABLE instance ADD COLUMN federation_mode TEXT NOT NULL DEFAULT 'blocklist'
	CHECK (federation_mode IN ('blocklist', 'allowlist'));

CREATE TABLE allowed_domains (
	domain     TEXT    PRIMARY KEY, -- lower-case host name or IP address, no port
	reason     TEXT    NOT NULL DEFAULT '',
	created_at INTEGER  NOT NULL     -- unix seconds, as blocked_domains
) STRICT;
