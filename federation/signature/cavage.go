package signature

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"net/http"
	"strings"
	"time"

	"github.com/superseriousbusiness/httpsig"
)

// Header lists are Mastodon's own (app/lib/request.rb), in its order, so a
// receiver that only knows Mastodon's shape is never surprised:
// inbox POSTs sign "(request-target) host date digest content-type" (plus
// collection-synchronization when present), signed GETs
// "(request-target) host date accept".

// signCavage signs req with draft-cavage: via httpsig, or for RSA keys in
// a build with its own RSA (ownCavageRSA) via signCavageRSA.
func signCavage(req *http.Request, body []byte, key Key, now time.Time) error {
	var alg httpsig.Algorithm
	var pk crypto.PrivateKey
	switch k := key.Private.(type) {
	case *rsa.PrivateKey:
		alg, pk = httpsig.RSA_SHA256, k
	case ed25519.PrivateKey:
		alg, pk = httpsig.ED25519, k
	default:
		return errf(ReasonUnsupported, "sign: draft-cavage needs an *rsa.PrivateKey or ed25519.PrivateKey, got %T", key.Private)
	}
	// httpsig writes keyId between quotes without escaping.
	if strings.ContainsAny(key.ID, "\"\\\r\n") {
		return errf(ReasonMalformed, "sign: key id %q cannot be quoted", key.ID)
	}

	headers, body := cavageHeaders(req, body, now)
	if rk, ok := pk.(*rsa.PrivateKey); ok && ownCavageRSA {
		return signCavageRSA(req, body, headers, rk, key.ID)
	}
	return signCavageHTTPSig(req, body, headers, alg, pk, key.ID)
}

// cavageHeaders sets Host and Date on req and returns the headers to sign
// and the body to digest (nil: no Digest).
func cavageHeaders(req *http.Request, body []byte, now time.Time) ([]string, []byte) {
	// httpsig reads Host from req.Header, where a client-side request does
	// not keep it; the Go client itself writes req.Host on the wire and
	// never sends Header["Host"], so this only feeds the signer.
	req.Header.Set("Host", requestHost(req))
	req.Header.Set("Date", now.UTC().Format(http.TimeFormat))

	headers := make([]string, 0, 6)
	headers = append(headers, httpsig.RequestTarget, "host", "date")
	if hasBody(req.Method) {
		headers = append(headers, "digest")
		if len(req.Header.Values("Content-Type")) > 0 {
			headers = append(headers, "content-type")
		}
		if body == nil {
			// httpsig only adds a Digest for a non-nil body, and
			// Mastodon requires one on every POST.
			body = []byte{}
		}
	} else {
		if len(req.Header.Values("Accept")) > 0 {
			headers = append(headers, "accept")
		}
		body = nil
	}
	if len(req.Header.Values(collectionSync)) > 0 {
		headers = append(headers, "collection-synchronization")
	}
	return headers, body
}

// signCavageHTTPSig has httpsig add the Digest (when body is not nil) and
// the Signature of headers to req.
func signCavageHTTPSig(req *http.Request, body []byte, headers []string, alg httpsig.Algorithm, pk crypto.PrivateKey, keyID string) error {
	// One signer per request: httpsig signers keep a hash state and are
	// not safe for concurrent use. Creating one costs a few allocations,
	// nothing next to the RSA operation.
	signer, got, err := httpsig.NewSigner([]httpsig.Algorithm{alg}, httpsig.DigestSha256, headers, httpsig.Signature, 0)
	if err != nil {
		return errf(ReasonUnsupported, "sign: %v", err)
	}
	if got != alg { // NewSigner silently falls back to its default
		return errf(ReasonUnsupported, "sign: httpsig chose %s instead of %s", got, alg)
	}

	// httpsig builds (request-target) from the decoded URL.Path, but
	// receivers (Mastodon's original_fullpath, our verifier) use the path
	// as sent, percent-escapes included. Hand httpsig a shallow copy whose
	// Path is the escaped form; the header map is shared, so the Digest
	// and Signature it adds land on req.
	target := req
	if p := escapedPath(req); p != req.URL.Path {
		u := *req.URL
		u.Path, u.RawPath = p, ""
		target = req.WithContext(req.Context())
		target.URL = &u
	}
	if err := signer.SignRequest(pk, keyID, target, body); err != nil {
		return errf(ReasonMalformed, "sign: %v", err)
	}
	return nil
}

// escapedPath is the path as it goes on the wire, "/" when empty.
func escapedPath(r *http.Request) string {
	if p := r.URL.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

// parseCavage reads a draft-cavage Signature header and builds the signing
// string(s), following Mastodon's SignedRequest::HttpSignature.
func parseCavage(r *http.Request, now time.Time) (*Signed, error) {
	vals := r.Header.Values("Signature")
	if len(vals) != 1 {
		return nil, errf(ReasonMalformed, "expected one Signature header, got %d", len(vals))
	}
	p, err := parseCavageParams(vals[0])
	if err != nil {
		return nil, err
	}
	if p.keyID == "" || p.signature == "" {
		return nil, errf(ReasonMalformed, "keyId and signature are required")
	}

	// The algorithm name only restricts which key type may verify; the
	// key decides the algorithm. Mastodon accepts rsa-sha256 and hs2019
	// (the default when absent); ed25519 is accepted for other servers.
	alg := "hs2019"
	if p.hasAlgorithm {
		alg = strings.ToLower(p.algorithm)
	}
	s := &Signed{KeyID: p.keyID, Scheme: Cavage, Algorithm: alg}
	switch alg {
	case "hs2019":
		s.declared = algUnknown
	case "rsa-sha256":
		s.declared = algRSA
	case "ed25519":
		s.declared = algEd25519
	default:
		return nil, errf(ReasonUnsupported, "unsupported signature algorithm %q (only rsa-sha256, hs2019, ed25519)", p.algorithm)
	}

	switch {
	case p.hasHeaders:
		s.components = strings.Fields(strings.ToLower(p.headers))
	case alg == "hs2019":
		s.components = []string{"(created)"}
	default:
		s.components = []string{"date"}
	}

	if len(s.components) > maxComponents {
		return nil, errf(ReasonMalformed, "%d signed headers, more than %d", len(s.components), maxComponents)
	}
	if s.sig, err = decodeSignature(p.signature); err != nil {
		return nil, err
	}

	// (created) and (expires) are only meaningful for hs2019-style
	// algorithms; the draft forbids them with rsa-sha256.
	pseudoOK := alg != "rsa-sha256"
	var created, expires time.Time
	hasCreated, hasExpires := false, false
	if p.hasCreated && pseudoOK {
		if created, err = parseUnix(p.created, "created"); err != nil {
			return nil, err
		}
		hasCreated = true
	} else if d := r.Header.Get("Date"); d != "" {
		t, err := http.ParseTime(d)
		if err != nil {
			return nil, errf(ReasonMalformed, "invalid Date header %q", d)
		}
		created, hasCreated = t, true
	}
	if p.hasExpires {
		if expires, err = parseUnix(p.expires, "expires"); err != nil {
			return nil, err
		}
		hasExpires = true
	}
	if hasCreated {
		s.Created = created
	}

	// Build the signing string with the query in (request-target) and,
	// when there is a query, a second one without it: Mastodon ≤4.2 and
	// some other servers sign the path only.
	if s.base, err = cavageBase(r, s.components, p, pseudoOK, true); err != nil {
		return nil, err
	}
	if r.URL.RawQuery != "" || r.URL.ForceQuery {
		for _, c := range s.components {
			if c == "(request-target)" {
				if s.altBase, err = cavageBase(r, s.components, p, pseudoOK, false); err != nil {
					return nil, err
				}
				break
			}
		}
	}

	if err := checkWindow(now, created, hasCreated, expires, hasExpires); err != nil {
		return nil, err
	}
	return s, nil
}

// cavageBase builds the draft-cavage signing string: one "name: value" line
// per covered header, in the signer's order, joined by LF.
func cavageBase(r *http.Request, headers []string, p cavageParams, pseudoOK, withQuery bool) ([]byte, error) {
	b := make([]byte, 0, 256)
	for i, h := range headers {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, h...)
		b = append(b, ": "...)
		switch h {
		case "(request-target)":
			b = append(b, strings.ToLower(r.Method)...)
			b = append(b, ' ')
			if withQuery {
				b = append(b, r.URL.RequestURI()...)
			} else {
				b = append(b, escapedPath(r)...)
			}
		case "(created)":
			if !pseudoOK || !p.hasCreated {
				return nil, errf(ReasonMalformed, "(created) is signed but not usable with algorithm or missing")
			}
			b = append(b, p.created...)
		case "(expires)":
			if !pseudoOK || !p.hasExpires {
				return nil, errf(ReasonMalformed, "(expires) is signed but not usable with algorithm or missing")
			}
			b = append(b, p.expires...)
		default:
			v, err := headerValue(r, h)
			if err != nil {
				return nil, err
			}
			b = append(b, v...)
		}
	}
	return b, nil
}
