-- Generated from store/schema/0120_host_signatures.sql by `go generate ./store`: edit that file.
-- What each remote host has shown about the HTTP signatures it verifies:
-- the evidence the delivery runner signs by (outbox/delivery/knocks.go).
-- A host without a row, or with no evidence in it, is sent draft-cavage
-- signed with RSA, which every server verifies; a 2xx answer is never
-- evidence, since some servers (snac) answer 202 before they verify. The
-- runners of every node share these rows and reread them every few
-- seconds; `herald signatures reset` and the console delete them. Herald
-- before this table learnt per process, in memory, so there is no learnt
-- state to carry over: every host starts here without evidence. Times are
-- unix milliseconds; 0 is never.
CREATE TABLE host_signatures (
	host               TEXT    PRIMARY KEY,                 -- host[:port] in lower case, as deliveries.host
	-- How Herald knows the host verifies RFC 9421 ('' for no evidence):
	-- 'refused-cavage' (it answered 400/401 to our draft-cavage signature
	-- and 2xx to RFC 9421 in the same attempt), 'signed' (its own requests
	-- to us are signed with RFC 9421), 'accept-signature' (it sent an
	-- Accept-Signature header, RFC 9421 section 5).
	rfc9421            TEXT    NOT NULL DEFAULT '' CHECK (rfc9421 IN ('', 'refused-cavage', 'signed', 'accept-signature')),
	rfc9421_at         BIGINT  NOT NULL DEFAULT 0,
	-- How Herald knows it verifies a signature made with an Ed25519 key:
	-- 'signed' (its own requests are signed with one), 'fep-521a' (its
	-- actors publish Ed25519 Multikeys), 'accept-signature' (it asked for
	-- alg="ed25519").
	ed25519            TEXT    NOT NULL DEFAULT '' CHECK (ed25519 IN ('', 'signed', 'fep-521a', 'accept-signature')),
	ed25519_at         BIGINT  NOT NULL DEFAULT 0,
	-- When it answered 400/401 to our RSA RFC 9421 (or Ed25519) signature
	-- and 2xx to the fallback: that signature is not sent again until an
	-- operator resets the host.
	refused_rfc9421_at BIGINT  NOT NULL DEFAULT 0,
	refused_ed25519_at BIGINT  NOT NULL DEFAULT 0,
	-- What its NodeInfo names (read only for a host with half the evidence
	-- an Ed25519 signature needs), and when it was read.
	software           TEXT    NOT NULL DEFAULT '',
	software_version   TEXT    NOT NULL DEFAULT '',
	nodeinfo_at        BIGINT  NOT NULL DEFAULT 0,
	updated_at         BIGINT  NOT NULL
);
