package signature

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/dunglas/httpsfv"
)

// digestHeaderValue is the draft-cavage Digest (RFC 3230) value Mastodon
// sends: "SHA-256=<standard base64>".
func digestHeaderValue(sum *[sha256.Size]byte) string {
	return "SHA-256=" + base64.StdEncoding.EncodeToString(sum[:])
}

// contentDigestValue is the RFC 9530 Content-Digest value: an RFC 8941
// dictionary whose key must be lowercase, "sha-256=:<base64>:".
func contentDigestValue(sum *[sha256.Size]byte) string {
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// checkDigest applies Mastodon's verify_body_digest! to a draft-cavage
// Digest header: split on commas, algorithm token case-insensitive, only
// sha-256 accepted, and the value compared exactly with the standard base64
// of SHA-256(body) (so a differently padded or URL-safe value fails, as it
// does in Mastodon).
func checkDigest(h http.Header, body []byte) error {
	vals := h.Values("Digest")
	if len(vals) == 0 {
		return errf(ReasonMissingComponent, "Digest header missing")
	}
	var given string
	found := false
	for _, v := range vals {
		for _, d := range strings.Split(v, ",") {
			alg, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			if strings.EqualFold(strings.TrimSpace(alg), "sha-256") {
				given, found = strings.TrimSpace(val), true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return errf(ReasonUnsupported, "only SHA-256 is supported in Digest")
	}
	sum := sha256.Sum256(body)
	want := base64.StdEncoding.EncodeToString(sum[:])
	if subtle.ConstantTimeCompare([]byte(want), []byte(given)) != 1 {
		return errf(ReasonDigestMismatch, "Digest does not match the body: computed SHA-256 %s, given %q", want, given)
	}
	return nil
}

// checkContentDigest applies Mastodon's RFC 9421 rule to Content-Digest:
// the header must be a valid RFC 8941 dictionary (else the request is
// malformed, 400), must offer sha-256 as a byte sequence, and that must
// equal SHA-256(body). "SHA-256=:…:" is not a valid dictionary key, so an
// uppercase key is malformed too.
func checkContentDigest(h http.Header, body []byte) error {
	vals := h.Values("Content-Digest")
	if len(vals) == 0 {
		return errf(ReasonMissingComponent, "Content-Digest header missing")
	}
	dict, err := httpsfv.UnmarshalDictionary(vals)
	if err != nil {
		return errf(ReasonMalformed, "Content-Digest is not a valid RFC 8941 dictionary: %v", err)
	}
	m, ok := dict.Get("sha-256")
	if !ok {
		return errf(ReasonUnsupported, "only sha-256 is supported in Content-Digest (offered %v)", dict.Names())
	}
	it, ok := m.(httpsfv.Item)
	if !ok {
		return errf(ReasonMalformed, "Content-Digest sha-256 is not a byte sequence")
	}
	given, ok := it.Value.([]byte)
	if !ok {
		return errf(ReasonMalformed, "Content-Digest sha-256 is not a byte sequence")
	}
	sum := sha256.Sum256(body)
	if subtle.ConstantTimeCompare(sum[:], given) != 1 {
		return errf(ReasonDigestMismatch, "Content-Digest does not match the body: computed sha-256 %s, given %s",
			base64.StdEncoding.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(given))
	}
	return nil
}
