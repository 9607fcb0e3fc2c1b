-- A scratch row ProbeSpace writes and removes (sqlite/0020).
CREATE TABLE space_probe (
	id  BIGINT  PRIMARY KEY,
	pad BYTEA   NOT NULL
);
