-- Generated from store/schema/0031_admin.sql by `go generate ./store`: edit that file.
-- The operator's console (/admin). The password is stored only as a bcrypt
-- hash (`herald admin password`); one row.
CREATE TABLE admin (
	id            BIGINT  PRIMARY KEY CHECK (id = 1),
	password_hash TEXT    NOT NULL,
	set_at        BIGINT  NOT NULL -- unix seconds
);

-- Console sessions: the cookie's token is stored only as its SHA-256; csrf is
-- the token every form of the session carries. Setting the password ends
-- every session. Unix seconds.
CREATE TABLE admin_sessions (
	token_hash TEXT    PRIMARY KEY,
	csrf       TEXT    NOT NULL,
	created_at BIGINT  NOT NULL,
	expires_at BIGINT  NOT NULL
);

-- Per-minute delivery history for the console's charts: attempts that
-- succeeded (sent), will be retried (retry) or were given up on (failed),
-- added by the scheduler's result batches, and the queue depth (depth:
-- queued plus in flight) sampled each minute. Swept after 2 days.
CREATE TABLE delivery_history (
	minute BIGINT  NOT NULL, -- unix seconds / 60
	series TEXT    NOT NULL,
	n      BIGINT  NOT NULL,
	PRIMARY KEY (minute, series)
);
