-- Generated from store/schema/0501_moderation.sql by `go generate ./store`: edit that file.
-- Moderation severities as Mastodon has them (issue 31).
--
-- blocked_domains becomes Mastodon's domain_blocks: severity 'suspend' (what
-- every row meant before: nothing passes either way), 'silence' (the
-- console's and CLI's "limit": accepted, kept out of public views, follows
-- need approval, only followed accounts reach an actor's inbox) or 'noop'
-- (only the flags); reject_media (attachments dropped from what is stored),
-- reject_reports (Flags ignored); obfuscate (the status page shows the
-- domain with letters starred). Every column of Mastodon's CSV export has
-- one here, so `herald block import/export` round-trips.
ALTER TABLE blocked_domains ADD COLUMN severity TEXT NOT NULL DEFAULT 'suspend';
ALTER TABLE blocked_domains ADD COLUMN reject_media INTEGER NOT NULL DEFAULT 0;
ALTER TABLE blocked_domains ADD COLUMN reject_reports INTEGER NOT NULL DEFAULT 0;
ALTER TABLE blocked_domains ADD COLUMN obfuscate INTEGER NOT NULL DEFAULT 0;

-- Remote accounts the operator suspended (nothing from them is accepted,
-- nothing is delivered to them) or limited (as a silenced domain, for that
-- account alone). Unix milliseconds.
CREATE TABLE remote_account_moderation (
	account    TEXT   PRIMARY KEY, -- the actor id
	severity   TEXT   NOT NULL CHECK (severity IN ('suspend', 'silence')),
	reason     TEXT   NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL
) STRICT;

-- Local actors the operator suspended: the actor document is served as
-- suspended (Mastodon's shape), its content answers 403, nothing of it is
-- delivered, it cannot publish. Reversible (`herald actor unsuspend`) for
-- 30 days from suspended_at. Unix milliseconds.
CREATE TABLE actor_suspensions (
	actor_id     INTEGER PRIMARY KEY REFERENCES actors(id) ON DELETE CASCADE,
	suspended_at INTEGER NOT NULL,
	reason       TEXT   NOT NULL DEFAULT ''
) STRICT;

CREATE TRIGGER remote_account_moderation_policy_insert AFTER INSERT ON remote_account_moderation
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER remote_account_moderation_policy_update AFTER UPDATE ON remote_account_moderation
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER remote_account_moderation_policy_delete AFTER DELETE ON remote_account_moderation
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER actor_suspensions_policy_insert AFTER INSERT ON actor_suspensions
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER actor_suspensions_policy_delete AFTER DELETE ON actor_suspensions
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
