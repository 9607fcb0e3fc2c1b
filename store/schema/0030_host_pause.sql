-- An operator's pause of deliveries to one host (`herald deliveries pause`,
-- the console): its queued rows are not claimed while it lasts, so they
-- spend no retry; resuming lets them go out again under the per-host cap.
-- Unix seconds; paused_until NULL means until resumed.
ALTER TABLE hosts ADD COLUMN paused_at BIGINT;
ALTER TABLE hosts ADD COLUMN paused_until BIGINT;

CREATE INDEX hosts_paused ON hosts(host) WHERE paused_at IS NOT NULL;

--! postgres
-- A resume (from any node's console or a command) wakes every node: the
-- held rows are due at once, and no delivery row changed to say so (see
-- herald_wake in 0004).
CREATE TRIGGER hosts_wake_resume AFTER UPDATE OF paused_at ON hosts
	FOR EACH ROW WHEN (OLD.paused_at IS NOT NULL AND NEW.paused_at IS NULL)
	EXECUTE FUNCTION herald_wake();
--! both
