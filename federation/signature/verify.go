package signature

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Mastodon's time window (SignedRequest#matches_time_window?): a signature
// is valid from created for 5 minutes unless it says otherwise, never for
// more than 12 hours, and both ends get an hour of clock skew. For a
// Date-only signature that means now−65min ≤ Date ≤ now+60min.
const (
	clockSkew       = time.Hour
	defaultValidity = 5 * time.Minute
	maxValidity     = 12 * time.Hour
)

// maxComponents bounds the covered components of one signature. Real
// signatures cover fewer than ten; the bound keeps a hostile header list
// from costing quadratic time or megabytes of signature base.
const maxComponents = 64

// Options configures Parse.
type Options struct {
	// Now is the clock. Zero means time.Now(); tests inject a fixed time.
	Now time.Time
	// Scheme is the public scheme, "https" (the default when empty) or
	// "http", used to rebuild RFC 9421's @target-uri and @scheme. It comes
	// from configuration because behind a TLS-terminating proxy r.TLS is
	// nil and would give the wrong answer.
	Scheme string
}

// Signed is a parsed inbound signature whose keyless checks passed. Fetch
// the key named by KeyID, then call Verify.
type Signed struct {
	// KeyID is the keyId (draft-cavage) or keyid (RFC 9421) parameter.
	KeyID string
	// Scheme is the signature scheme the request used.
	Scheme Scheme
	// Algorithm is the declared algorithm name, lowercased for
	// draft-cavage ("hs2019" when absent) and as sent for RFC 9421 (""
	// when absent). Informational: the key type decides the algorithm.
	Algorithm string
	// Label is the RFC 9421 signature label ("" for draft-cavage).
	Label string
	// Created is when the request says it was signed: the created
	// parameter, else the Date header; zero if neither was given.
	Created time.Time

	declared   keyAlg   // key type the declared algorithm allows; algUnknown = any
	components []string // covered components, lowercase, in order
	base       []byte   // signing string / signature base
	altBase    []byte   // draft-cavage: base without the query in (request-target)
	sig        []byte
}

// Covers reports whether the signature covers component, given in lowercase
// as it appears in the signature: a header name ("digest",
// "collection-synchronization"), a draft-cavage pseudo-header
// ("(request-target)") or an RFC 9421 derived component ("@target-uri").
// Use it to decide whether a header such as Collection-Synchronization can
// be trusted.
func (s *Signed) Covers(component string) bool {
	for _, c := range s.components {
		if c == component {
			return true
		}
	}
	return false
}

// Components returns the covered components in signature order (a copy).
func (s *Signed) Components() []string {
	return append([]string(nil), s.components...)
}

// Parse reads the signature headers of an inbound request and checks
// everything that needs no key: required parameters and covered components
// (Mastodon's policy), the time window, and the body digest. It returns the
// keyId and scheme in a *Signed, or an *Error (and a nil *Signed).
//
// A request with Signature-Input is RFC 9421, else one with Signature is
// draft-cavage, else the error's Reason is ReasonNoSignature. body is the
// request body as read (nil or empty for a GET); Parse does not read
// r.Body.
func Parse(r *http.Request, body []byte, opts Options) (*Signed, error) {
	s, err := parse(r, opts)
	if err != nil {
		return nil, err
	}
	if err := s.checkPolicy(r.Method); err != nil {
		return nil, err
	}
	if err := s.checkBody(r.Header, body); err != nil {
		return nil, err
	}
	return s, nil
}

// parse is Parse without Mastodon's covered-component policy and without
// the body check: syntax, required parameters, signature base and time
// window. The test vectors (RFC 9421 B.2.6, draft-cavage Appendix C) cover
// less than Mastodon demands, so they are checked through this.
func parse(r *http.Request, opts Options) (*Signed, error) {
	if r == nil || r.URL == nil {
		return nil, errf(ReasonMalformed, "nil request")
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	switch {
	case len(r.Header.Values("Signature-Input")) > 0:
		return parseRFC9421(r, opts, now)
	case len(r.Header.Values("Signature")) > 0:
		return parseCavage(r, now)
	default:
		return nil, errf(ReasonNoSignature, "request not signed")
	}
}

// checkPolicy enforces what Mastodon requires a signature to cover
// (verify_signature_strength!), so that a request we accept is one Mastodon
// would accept too and, more to the point, one whose method, target and
// body are actually bound to the key.
func (s *Signed) checkPolicy(method string) error {
	switch s.Scheme {
	case Cavage:
		if !s.Covers("date") && !s.Covers("(created)") {
			return errf(ReasonMissingComponent, "the Date header or (created) pseudo-header must be signed")
		}
		if !s.Covers("(request-target)") && !s.Covers("digest") {
			return errf(ReasonMissingComponent, "the Digest header or (request-target) pseudo-header must be signed")
		}
		if method == http.MethodGet && !s.Covers("host") {
			return errf(ReasonMissingComponent, "the Host header must be signed on a GET request")
		}
		if method == http.MethodPost && !s.Covers("digest") {
			return errf(ReasonMissingComponent, "the Digest header must be signed on a POST request")
		}
	case RFC9421:
		if !s.Covers("@method") || !s.Covers("@target-uri") {
			return errf(ReasonMissingComponent, "@method and @target-uri must be signed")
		}
		if method == http.MethodPost && !s.Covers("content-digest") {
			return errf(ReasonMissingComponent, "Content-Digest must be signed on a POST request")
		}
	}
	return nil
}

// checkBody compares the signed digest header with the body. Signature
// libraries (httpsig included) do not, so without this a signature would
// say nothing about the body.
func (s *Signed) checkBody(h http.Header, body []byte) error {
	switch {
	case s.Scheme == Cavage && s.Covers("digest"):
		return checkDigest(h, body)
	case s.Scheme == RFC9421 && s.Covers("content-digest"):
		return checkContentDigest(h, body)
	}
	return nil
}

// Verify checks the signature with pub, an *rsa.PublicKey (RSASSA-PKCS1-v1_5
// with SHA-256) or an ed25519.PublicKey. The key type picks the algorithm;
// a declared algorithm that names the other key type fails. For
// draft-cavage, a signing string with the query in (request-target) is tried
// first and, failing that, one without it.
func (s *Signed) Verify(pub crypto.PublicKey) error {
	if s == nil || s.base == nil {
		return errf(ReasonMalformed, "verify: nothing parsed")
	}
	alg := algOfPublic(pub)
	if alg == algUnknown {
		return errf(ReasonUnsupported, "verify: key type %T is neither RSA nor Ed25519", pub)
	}
	if s.declared != algUnknown && s.declared != alg {
		return errf(ReasonBadSignature, "declared algorithm %q does not match the %s key", s.Algorithm, algLabel(alg))
	}
	if verifyBase(alg, pub, s.base, s.sig) {
		return nil
	}
	if s.altBase != nil && verifyBase(alg, pub, s.altBase, s.sig) {
		return nil
	}
	return errf(ReasonBadSignature, "%s signature verification failed for key %s", algLabel(alg), s.KeyID)
}

// verifyBase does the cryptographic check of one base.
func verifyBase(alg keyAlg, pub crypto.PublicKey, base, sig []byte) bool {
	switch alg {
	case algRSA:
		h := sha256.Sum256(base)
		return rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), crypto.SHA256, h[:], sig) == nil
	case algEd25519:
		return ed25519.Verify(pub.(ed25519.PublicKey), base, sig)
	}
	return false
}

// algLabel names a key type for messages.
func algLabel(a keyAlg) string {
	switch a {
	case algRSA:
		return "RSA"
	case algEd25519:
		return "Ed25519"
	}
	return "unknown"
}

// checkWindow applies Mastodon's time window; see the constants above.
func checkWindow(now, created time.Time, hasCreated bool, expires time.Time, hasExpires bool) error {
	if hasCreated {
		if !hasExpires {
			expires, hasExpires = created.Add(defaultValidity), true
		}
		if limit := created.Add(maxValidity); expires.After(limit) {
			expires = limit
		}
		if created.After(now.Add(clockSkew)) {
			return errf(ReasonDateWindow, "signed at %s, more than %s in the future", created.UTC().Format(time.RFC3339), clockSkew)
		}
	}
	if hasExpires && now.After(expires.Add(clockSkew)) {
		return errf(ReasonDateWindow, "signature expired at %s", expires.UTC().Format(time.RFC3339))
	}
	return nil
}

// saneUnix bounds timestamps so that time arithmetic cannot overflow; a
// million years either side of 1970 is plenty.
func saneUnix(v int64) bool { return v > -1<<45 && v < 1<<45 }

// parseUnix parses a draft-cavage created/expires value: an integer, or a
// decimal (the draft allows sub-second expires), truncated.
func parseUnix(v, name string) (time.Time, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && saneUnix(n) {
		return time.Unix(n, 0), nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && f > -(1<<45) && f < 1<<45 {
		return time.Unix(int64(f), 0), nil
	}
	return time.Time{}, errf(ReasonMalformed, "%s is not a timestamp: %q", name, v)
}

// decodeSignature decodes a draft-cavage signature value. Mastodon decodes
// leniently (Ruby's Base64.decode64), so unpadded base64 is accepted too.
func decodeSignature(v string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(v); err == nil && len(b) > 0 {
		return b, nil
	}
	if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "=")); err == nil && len(b) > 0 {
		return b, nil
	}
	return nil, errf(ReasonMalformed, "signature is not valid base64")
}

// headerValue is the value of a covered header as both schemes sign it: the
// field lines trimmed and joined with ", ". host comes from r.Host because
// Go's server moves it out of r.Header. A covered header that is absent is
// a missing component; CR or LF in a value would let a header forge lines
// of the signature base, so they make the request malformed.
func headerValue(r *http.Request, name string) (string, error) {
	var vals []string
	if name == "host" && r.Host != "" {
		vals = []string{r.Host}
	} else {
		vals = r.Header.Values(name)
	}
	if len(vals) == 0 {
		return "", errf(ReasonMissingComponent, "signed header %q is missing", name)
	}
	var v string
	if len(vals) == 1 {
		v = strings.TrimSpace(vals[0])
	} else {
		parts := make([]string, len(vals))
		for i, x := range vals {
			parts[i] = strings.TrimSpace(x)
		}
		v = strings.Join(parts, ", ")
	}
	if strings.ContainsAny(v, "\r\n") {
		return "", errf(ReasonMalformed, "signed header %q contains a line break", name)
	}
	return v, nil
}
