-- Generated from store/schema/0009_jobs.sql by `go generate ./store`: edit that file.
-- Operator commands waiting for the server. A command that needs the
-- network or the server's keys (post, follow, approve, delete, ...) records
-- its intent here and returns; the running server does the work with its own
-- client and policy, and writes the outcome back. Times are unix
-- milliseconds.
CREATE TABLE jobs (
	id          INTEGER  PRIMARY KEY,
	kind        TEXT    NOT NULL, -- post, delete, follow, unfollow, approve, reject, actor-delete
	actor_id    INTEGER  NOT NULL REFERENCES actors(id),
	args        TEXT    NOT NULL, -- JSON: the command's arguments
	state       TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
	lease_owner TEXT,             -- while running: the process
	lease_until INTEGER,
	attempts    INTEGER NOT NULL DEFAULT 0,
	result      TEXT,             -- JSON: what the job did (done)
	error       TEXT,             -- why it failed (failed)
	created_at  INTEGER  NOT NULL,
	updated_at  INTEGER  NOT NULL
) STRICT;

CREATE INDEX jobs_state ON jobs(state, id);

