-- The instance: scheme and domain of every id, and the log level (sqlite/0007).
CREATE TABLE instance (
	id         BIGINT  PRIMARY KEY CHECK (id = 1),
	scheme     TEXT    NOT NULL CHECK (scheme IN ('https', 'http')),
	domain     TEXT    NOT NULL,
	log_level  TEXT    NOT NULL DEFAULT 'info',
	created_at BIGINT  NOT NULL                    -- unix milliseconds
);

-- `herald log-level` reaches every node at once.
CREATE TRIGGER instance_wake AFTER UPDATE OF log_level ON instance
	FOR EACH STATEMENT EXECUTE FUNCTION herald_wake();
