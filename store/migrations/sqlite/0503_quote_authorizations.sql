-- Generated from store/schema/0503_quote_authorizations.sql by `go generate ./store`: edit that file.
-- FEP-044f: the quotes of local posts their authors approved. A peer's
-- QuoteRequest for a local post is answered with an Accept whose result
-- is the stamp (a QuoteAuthorization served at
-- /users/{name}/quote_authorizations/{id}) the quoting post then names. A
-- revoked stamp (revoked_at) answers 404, and its Delete goes to the
-- quoting server. Unix milliseconds.
CREATE TABLE quote_authorizations (
	id         INTEGER PRIMARY KEY,
	object_id  INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE, -- the quoted local post
	quote      TEXT   NOT NULL,               -- the quoting post's id (interactingObject)
	actor      TEXT   NOT NULL,               -- its author, who asked
	request    TEXT   NOT NULL DEFAULT '',    -- the QuoteRequest's id
	created_at INTEGER NOT NULL,
	revoked_at INTEGER,
	UNIQUE (object_id, quote)
) STRICT;
