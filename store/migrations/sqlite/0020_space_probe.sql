-- A scratch row ProbeSpace writes and removes to learn whether the
-- database has space again after a write failed for lack of it.
CREATE TABLE space_probe (
	id  INTEGER PRIMARY KEY,
	pad BLOB    NOT NULL
) STRICT;
