-- Generated from store/schema/0007_instance.sql by `go generate ./store`: edit that file.
-- The instance: the scheme and domain every id is built from. Written once,
-- by `herald init` or the first `herald serve`, and read by every command,
-- so a command and the server always mint the same ids. One row.
CREATE TABLE instance (
	id         BIGINT  PRIMARY KEY CHECK (id = 1),
	scheme     TEXT    NOT NULL CHECK (scheme IN ('https', 'http')),
	domain     TEXT    NOT NULL,                -- host[:port], lower case
	log_level  TEXT    NOT NULL DEFAULT 'info', -- the server's log level; SIGHUP and `herald log-level` apply it
	created_at BIGINT  NOT NULL                 -- unix milliseconds
);

-- `herald log-level` reaches every node at once.
CREATE TRIGGER instance_wake AFTER UPDATE OF log_level ON instance
	FOR EACH STATEMENT EXECUTE FUNCTION herald_wake();
