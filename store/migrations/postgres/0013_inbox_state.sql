-- What arrived is applied, not piled up (sqlite/0013).
ALTER TABLE inbox_items ADD COLUMN current   TEXT;
ALTER TABLE inbox_items ADD COLUMN undone_at BIGINT;                       -- unix seconds
ALTER TABLE inbox_items ADD COLUMN history   BOOLEAN NOT NULL DEFAULT false;

CREATE INDEX inbox_items_iri ON inbox_items(iri) WHERE iri IS NOT NULL;
