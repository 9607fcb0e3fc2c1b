-- Generated from store/schema/0300_webhook_pause.sql by `go generate ./store`: edit that file.
-- An operator's pause of one webhook (`herald webhook pause`, the console):
-- its events are still recorded and queued, but none is sent while it lasts,
-- so they spend no retry; resuming sends what waited, oldest first. Unlike
-- disabled_at (the receiver answered 410 Gone, and nothing more is queued),
-- a pause loses nothing. Unix milliseconds.
ALTER TABLE webhooks ADD COLUMN paused_at BIGINT;

-- A resume (from any node's console or a command) wakes every node: the
-- held rows are due at once, and no delivery row changed to say so (see
-- herald_wake in 0004).
CREATE TRIGGER webhooks_wake_resume AFTER UPDATE OF paused_at ON webhooks
	FOR EACH ROW WHEN (OLD.paused_at IS NOT NULL AND NEW.paused_at IS NULL)
	EXECUTE FUNCTION herald_wake();
