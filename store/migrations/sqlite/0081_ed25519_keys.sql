-- Generated from store/schema/0081_ed25519_keys.sql by `go generate ./store`: edit that file.
-- A second key pair per local actor, Ed25519 (FEP-521a: published as a
-- Multikey in the actor's assertionMethod beside the RSA publicKey). It
-- signs RFC 9421 deliveries to hosts that have shown they verify it; an
-- Ed25519 signature costs a thirtieth of an RSA-2048 one. PKCS#8 and PKIX
-- PEM, like the RSA pair. Existing actors get theirs when a Herald with
-- this migration opens the database (store.Open), not here: SQL cannot
-- make keys. The private key is a secret like private_key_pem.
ALTER TABLE actors ADD COLUMN ed25519_private_key_pem TEXT NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN ed25519_public_key_pem  TEXT NOT NULL DEFAULT '';
