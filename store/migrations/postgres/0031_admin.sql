-- The operator's console (sqlite/0031): the password's bcrypt hash (one
-- row), the sessions (the cookie token's SHA-256 and the session's CSRF
-- token) and the per-minute delivery history. Unix seconds; the history's
-- minute is unix seconds / 60.
CREATE TABLE admin (
	id            BIGINT  PRIMARY KEY CHECK (id = 1),
	password_hash TEXT    NOT NULL,
	set_at        BIGINT  NOT NULL
);

CREATE TABLE admin_sessions (
	token_hash TEXT    PRIMARY KEY,
	csrf       TEXT    NOT NULL,
	created_at BIGINT  NOT NULL,
	expires_at BIGINT  NOT NULL
);

CREATE TABLE delivery_history (
	minute BIGINT  NOT NULL,
	series TEXT    NOT NULL,
	n      BIGINT  NOT NULL,
	PRIMARY KEY (minute, series)
);
