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
	id      BIGINT PRIMARY KEY CHECK (id = 1),
	version BIGINT NOT NULL
);

-- On PostgreSQL the trigger also wakes every node (herald_wake, 0004) to
-- reread the policy when the changing transaction commits.
CREATE FUNCTION herald_policy_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = policy_version.version + 1;
	PERFORM pg_notify('herald_wake', '');
	RETURN NULL;
END $$;

CREATE TRIGGER blocked_domains_policy AFTER INSERT OR UPDATE OR DELETE ON blocked_domains
	FOR EACH STATEMENT EXECUTE FUNCTION herald_policy_changed();
CREATE TRIGGER allowed_domains_policy AFTER INSERT OR UPDATE OR DELETE ON allowed_domains
	FOR EACH STATEMENT EXECUTE FUNCTION herald_policy_changed();
CREATE TRIGGER actor_domain_blocks_policy AFTER INSERT OR DELETE ON actor_domain_blocks
	FOR EACH STATEMENT EXECUTE FUNCTION herald_policy_changed();
CREATE TRIGGER instance_policy_mode AFTER UPDATE OF federation_mode ON instance
	FOR EACH ROW WHEN (OLD.federation_mode IS DISTINCT FROM NEW.federation_mode)
	EXECUTE FUNCTION herald_policy_changed();

-- hosts changes on every signed request (last_inbound_at): only the columns
-- the policy reads count, and only when they change.
CREATE TRIGGER hosts_policy_insert AFTER INSERT ON hosts
	FOR EACH ROW WHEN (NEW.unavailable_since IS NOT NULL OR NEW.paused_at IS NOT NULL)
	EXECUTE FUNCTION herald_policy_changed();
CREATE TRIGGER hosts_policy_update AFTER UPDATE OF unavailable_since, probation, paused_at, paused_until ON hosts
	FOR EACH ROW WHEN (OLD.unavailable_since IS DISTINCT FROM NEW.unavailable_since OR OLD.probation IS DISTINCT FROM NEW.probation
		OR OLD.paused_at IS DISTINCT FROM NEW.paused_at OR OLD.paused_until IS DISTINCT FROM NEW.paused_until)
	EXECUTE FUNCTION herald_policy_changed();
CREATE TRIGGER hosts_policy_delete AFTER DELETE ON hosts
	FOR EACH ROW WHEN (OLD.unavailable_since IS NOT NULL OR OLD.paused_at IS NOT NULL)
	EXECUTE FUNCTION herald_policy_changed();
