// Package signature signs outbound and checks inbound HTTP signatures, in
// both schemes the fediverse uses: draft-cavage-http-signatures-12 (the
// "Signature:" header every Mastodon version sends and accepts) and RFC 9421
// HTTP Message Signatures ("Signature-Input:" plus "Signature:", verified by
// Mastodon 4.5+ and sent by Fedify-based servers).
//
// Outbound, Sign adds Host/Date/Digest or Content-Digest and the signature
// headers to a request, with the header lists Mastodon itself uses, so the
// receiving side sees exactly what it expects.
//
// Inbound, checking is split in two because the public key is only known
// after the keyId has been read and the key fetched (possibly over the
// network):
//
//  1. Parse reads the headers and checks everything that needs no key:
//     required parameters, covered components (Mastodon's policy), the time
//     window, and the body digest. It returns the keyId.
//  2. Signed.Verify does the cryptographic check with the fetched key. The
//     caller may call it a second time with a refreshed key.
//
// Every failure is an *Error whose Reason is a short, fixed string, usable
// as a Prometheus label and for choosing the HTTP status (400 for malformed
// headers, 401 otherwise).
//
// draft-cavage signing goes through github.com/superseriousbusiness/httpsig.
// Inbound draft-cavage and all of RFC 9421 are implemented here (RFC 8941
// structured fields via github.com/dunglas/httpsfv), because httpsig's
// verifier checks created/expires against the wall clock with a 10 s skew,
// splits parameters naively on commas and mutates the request headers,
// and no RFC 9421 library builds @target-uri correctly.
package signature
