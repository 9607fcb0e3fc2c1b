-- Generated from store/schema/0013_inbox_state.sql by `go generate ./store`: edit that file.
-- What arrived is applied, not piled up: an Undo marks what it undoes, an
-- Update gives the item of the object it updates a current version, a
-- Delete marks the object's items deleted (deleted_at, as before). The
-- Undo, Update and Delete items themselves are history: listed only with
-- ?history=true.
ALTER TABLE inbox_items ADD COLUMN current   TEXT;                       -- the activity as it stands after Updates of its object; NULL: as received
ALTER TABLE inbox_items ADD COLUMN undone_at INTEGER;                     -- unix seconds: its actor undid it
ALTER TABLE inbox_items ADD COLUMN history   INTEGER NOT NULL DEFAULT 0; -- an Undo, Update or Delete, applied to what it refers to

CREATE INDEX inbox_items_iri ON inbox_items(iri) WHERE iri IS NOT NULL;
