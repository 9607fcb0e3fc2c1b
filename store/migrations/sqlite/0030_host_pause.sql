-- Generated from store/schema/0030_host_pause.sql by `go generate ./store`: edit that file.
-- An operator's pause of deliveries to one host (`herald deliveries pause`,
-- the console): its queued rows are not claimed while it lasts, so they
-- spend no retry; resuming lets them go out again under the per-host cap.
-- Unix seconds; paused_until NULL means until resumed.
ALTER TABLE hosts ADD COLUMN paused_at INTEGER;
ALTER TABLE hosts ADD COLUMN paused_until INTEGER;

CREATE INDEX hosts_paused ON hosts(host) WHERE paused_at IS NOT NULL;

