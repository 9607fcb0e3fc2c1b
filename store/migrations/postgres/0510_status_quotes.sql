-- Generated from store/schema/0510_status_quotes.sql by `go generate ./store`: edit that file.
-- FEP-044f: what a status quotes, local or remote (Mastodon's quotes
-- table, app/models/quote.rb). The quoted post is named by its id and
-- looked up when shown (Herald may not have it yet); approval is the
-- stamp (quoteAuthorization) that makes it accepted; legacy is a quote
-- named only by _misskey_quote, quoteUrl or quoteUri, shown only once
-- accepted. request is a local quote's QuoteRequest id, which the quoted
-- author's Accept or Reject names. state: pending, accepted, rejected,
-- revoked. Unix milliseconds.
CREATE TABLE status_quotes (
	status_id  BIGINT  PRIMARY KEY REFERENCES statuses(id) ON DELETE CASCADE, -- the quoting status
	quoted_iri TEXT    NOT NULL,
	approval   TEXT    NOT NULL DEFAULT '',
	legacy     BOOLEAN NOT NULL DEFAULT false,
	state      TEXT    NOT NULL DEFAULT 'pending',
	request    TEXT    NOT NULL DEFAULT '',
	updated_at BIGINT  NOT NULL
);
CREATE INDEX status_quotes_quoted ON status_quotes(quoted_iri, state);
CREATE INDEX status_quotes_approval ON status_quotes(approval) WHERE approval <> '';
CREATE INDEX status_quotes_request ON status_quotes(request) WHERE request <> '';
