-- A local actor suspended for 30 days is deleted for good (issue 31), as
-- Mastodon's AccountDeletionWorker deletes a suspended account's data:
-- deleted_at is when Herald did it (its content removed, the Delete of
-- the actor queued, the actor then served 410). The row stays so the
-- console and `herald actor list` can say so, and so the actor's keys
-- are removed once the Delete has reached every server. A suspension with
-- deleted_at set no longer counts as one: the actor is gone. Unix
-- milliseconds.
ALTER TABLE actor_suspensions ADD COLUMN deleted_at BIGINT;

--! sqlite
CREATE TRIGGER actor_suspensions_policy_update AFTER UPDATE ON actor_suspensions
BEGIN INSERT INTO policy_version(id, version) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET version = version + 1; END;
--! postgres
DROP TRIGGER actor_suspensions_policy ON actor_suspensions;
CREATE TRIGGER actor_suspensions_policy AFTER INSERT OR UPDATE OR DELETE ON actor_suspensions
	FOR EACH STATEMENT EXECUTE FUNCTION herald_policy_changed();
--! both
