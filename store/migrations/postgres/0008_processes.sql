-- Serving processes and the owners of leases (sqlite/0008). Times are unix
-- milliseconds.
CREATE TABLE processes (
	id           TEXT    PRIMARY KEY,
	hostname     TEXT    NOT NULL,
	pid          INTEGER NOT NULL,
	version      TEXT    NOT NULL,
	started_at   BIGINT  NOT NULL,
	heartbeat_at BIGINT  NOT NULL
);

ALTER TABLE deliveries ADD COLUMN lease_owner TEXT;
