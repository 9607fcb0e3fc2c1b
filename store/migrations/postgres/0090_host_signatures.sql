-- What each remote host has shown about the HTTP signatures it verifies
-- (sqlite/0090 explains every column): the evidence the delivery runner
-- signs by. No row, or no evidence, means draft-cavage with RSA. Times are
-- unix milliseconds; 0 is never.
CREATE TABLE host_signatures (
	host               TEXT    PRIMARY KEY,
	rfc9421            TEXT    NOT NULL DEFAULT '' CHECK (rfc9421 IN ('', 'refused-cavage', 'signed', 'accept-signature')),
	rfc9421_at         BIGINT  NOT NULL DEFAULT 0,
	ed25519            TEXT    NOT NULL DEFAULT '' CHECK (ed25519 IN ('', 'signed', 'fep-521a', 'accept-signature')),
	ed25519_at         BIGINT  NOT NULL DEFAULT 0,
	refused_rfc9421_at BIGINT  NOT NULL DEFAULT 0,
	refused_ed25519_at BIGINT  NOT NULL DEFAULT 0,
	software           TEXT    NOT NULL DEFAULT '',
	software_version   TEXT    NOT NULL DEFAULT '',
	nodeinfo_at        BIGINT  NOT NULL DEFAULT 0,
	updated_at         BIGINT  NOT NULL
);
