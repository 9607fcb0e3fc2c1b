-- Federation policy (sqlite/0050, store/policy.go): the mode `herald serve
-- --federation-mode` recorded, and the allowlist.
ALTER TABLE instance ADD COLUMN federation_mode TEXT NOT NULL DEFAULT 'blocklist'
	CHECK (federation_mode IN ('blocklist', 'allowlist'));

CREATE TABLE allowed_domains (
	domain     TEXT    PRIMARY KEY,                -- lower-case host name or IP address, no port
	reason     TEXT    NOT NULL DEFAULT '',
	created_at BIGINT  NOT NULL                    -- unix seconds, as blocked_domains
);
