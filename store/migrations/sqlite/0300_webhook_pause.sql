-- Generated from store/schema/0300_webhook_pause.sql by `go generate ./store`: edit that file.
-- An operator's pause of one webhook (`herald webhook pause`, the console):
-- its events are still recorded and queued, but none is sent while it lasts,
-- so they spend no retry; resuming sends what waited, oldest first. Unlike
-- disabled_at (the receiver answered 410 Gone, and nothing more is queued),
-- a pause loses nothing. Unix milliseconds.
ALTER TABLE webhooks ADD COLUMN paused_at INTEGER;

