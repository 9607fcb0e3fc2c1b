-- A scratch row ProbeSpace writes and removes to learn whether the
-- database has space again after a write failed for lack of it.
CREATE TABLE space_probe (
	id  BIGINT  PRIMARY KEY,
	pad BYTEA   NOT NULL
);
