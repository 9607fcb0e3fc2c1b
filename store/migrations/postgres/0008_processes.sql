-- Generated from store/schema/0008_processes.sql by `go generate ./store`: edit that file.
-- Serving processes. Each `herald serve` registers itself at start and
-- beats every few seconds; a lease (on a delivery or a job) names its
-- owner, so a process that starts can hand the leases of owners that are
-- gone back to the queue at once instead of waiting for them to expire.
-- Times are unix milliseconds.
CREATE TABLE processes (
	id           TEXT    PRIMARY KEY, -- random, minted at start
	hostname     TEXT    NOT NULL,
	pid          INTEGER NOT NULL,
	version      TEXT    NOT NULL,
	started_at   BIGINT  NOT NULL,
	heartbeat_at BIGINT  NOT NULL
);

ALTER TABLE deliveries ADD COLUMN lease_owner TEXT; -- the process holding the lease
