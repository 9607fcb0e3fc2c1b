-- Generated from store/schema/0130_policy_version.sql by `go generate ./store`: edit that file.
-- The federation policy's version (policy/): every change to what decides
-- whether Herald talks to a host (the blocklist, the allowlist, the mode, an
-- actor's domain blocks, a pause, a host becoming unavailable or recovering)
-- bumps it in the changing transaction, so every process, whichever command
-- or node made the change, sees that its copy of the policy is stale with
-- one primary-key read. One row, made by the first change (a database
-- without an instance row has a policy too); `herald db copy` leaves it
-- out, since the copy's own triggers make it.
CREATE TABLE policy_version (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
) STRICT;

CREATE TRIGGER blocked_domains_policy_insert AFTER INSERT ON blocked_domains
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER blocked_domains_policy_update AFTER UPDATE ON blocked_domains
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER blocked_domains_policy_delete AFTER DELETE ON blocked_domains
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;

CREATE TRIGGER allowed_domains_policy_insert AFTER INSERT ON allowed_domains
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER allowed_domains_policy_update AFTER UPDATE ON allowed_domains
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER allowed_domains_policy_delete AFTER DELETE ON allowed_domains
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;

CREATE TRIGGER actor_domain_blocks_policy_insert AFTER INSERT ON actor_domain_blocks
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER actor_domain_blocks_policy_delete AFTER DELETE ON actor_domain_blocks
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;

CREATE TRIGGER instance_policy_mode AFTER UPDATE OF federation_mode ON instance
	WHEN OLD.federation_mode IS NOT NEW.federation_mode
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;

-- hosts changes on every signed request (last_inbound_at): only the columns
-- the policy reads count, and only when they change.
CREATE TRIGGER hosts_policy_insert AFTER INSERT ON hosts
	WHEN NEW.unavailable_since IS NOT NULL OR NEW.paused_at IS NOT NULL
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER hosts_policy_update AFTER UPDATE OF unavailable_since, probation, paused_at, paused_until ON hosts
	WHEN OLD.unavailable_since IS NOT NEW.unavailable_since OR OLD.probation IS NOT NEW.probation
		OR OLD.paused_at IS NOT NEW.paused_at OR OLD.paused_until IS NOT NEW.paused_until
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
CREATE TRIGGER hosts_policy_delete AFTER DELETE ON hosts
	WHEN OLD.unavailable_since IS NOT NULL OR OLD.paused_at IS NOT NULL
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;

