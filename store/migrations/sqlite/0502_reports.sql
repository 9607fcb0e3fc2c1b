-- Generated from store/schema/0502_reports.sql by `go generate ./store`: edit that file.
-- Reports (issue 31): a Flag another server sent about a local actor or
-- its posts, or one a local actor made about a remote account (optionally
-- forwarded to that account's server as a Flag from the instance actor,
-- the reporter never named). The console's report queue. Unix
-- milliseconds.
CREATE TABLE reports (
	id           INTEGER  PRIMARY KEY,
	inbound      INTEGER NOT NULL DEFAULT 0, -- a Flag received (else made here)
	flag_id      TEXT,                           -- the Flag's id: received, or the one Herald sent
	reporter     TEXT    NOT NULL,               -- inbound: the Flag's actor; else the local actor's name
	account      TEXT    NOT NULL,               -- the reported account's actor id
	posts        TEXT    NOT NULL DEFAULT '[]',  -- JSON array of the reported posts' ids
	comment      TEXT    NOT NULL DEFAULT '',
	forwarded_at INTEGER,                         -- when the Flag was queued to the account's server
	state        TEXT    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'resolved', 'closed')),
	action       TEXT    NOT NULL DEFAULT '',    -- what resolved it: limit, suspend, block, delete, none
	created_at   INTEGER  NOT NULL,
	updated_at   INTEGER  NOT NULL
) STRICT;
CREATE UNIQUE INDEX reports_flag_id ON reports(flag_id) WHERE flag_id IS NOT NULL;
CREATE INDEX reports_state ON reports(state, id);

-- The moderators' notes on a report, oldest first.
CREATE TABLE report_notes (
	id         INTEGER PRIMARY KEY,
	report_id  INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
	body       TEXT   NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX report_notes_report ON report_notes(report_id, id);
