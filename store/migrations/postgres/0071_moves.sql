-- Account moves (sqlite/0071, FEP-7628): the accounts elsewhere that may
-- move to a local actor (alsoKnownAs, a JSON array of actor ids), and where
-- a local actor moved (movedTo; a moved actor refuses new followers).
ALTER TABLE actors ADD COLUMN also_known_as TEXT NOT NULL DEFAULT '[]';
ALTER TABLE actors ADD COLUMN moved_to      TEXT;
