package signature

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// label is the signature label Herald signs under; receivers take
// whichever label comes first, so its name carries no meaning.
const label = "sig1"

// RFC 9421 algorithm names (RFC 9421 §6.2.2).
const (
	algNameRSA     = "rsa-v1_5-sha256"
	algNameEd25519 = "ed25519"
)

// signRFC9421 signs req with RFC 9421, covering what Mastodon 4.5 requires:
// "@method" "@target-uri" and, with a body, "content-digest" (sha-256).
// The base is written straight into one buffer rather than through httpsfv:
// this is the delivery hot path and every field is known to be valid.
func signRFC9421(req *http.Request, body []byte, key Key, now time.Time) error {
	var algName string
	alg := algOfPublic(key.Private.Public())
	switch alg {
	case algRSA:
		algName = algNameRSA
	case algEd25519:
		algName = algNameEd25519
	default:
		return errf(ReasonUnsupported, "sign: key type %T is neither RSA nor Ed25519", key.Private.Public())
	}
	if !isSFString(key.ID) {
		return errf(ReasonMalformed, "sign: key id %q is not a valid structured-field string", key.ID)
	}
	method := req.Method
	withBody := hasBody(method)
	var digest string
	if withBody {
		sum := sha256.Sum256(body)
		digest = contentDigestValue(&sum)
		req.Header.Set("Content-Digest", digest)
	}
	var csync string
	hasCSync := false
	if len(req.Header.Values(collectionSync)) > 0 {
		v, err := headerValue(req, "collection-synchronization")
		if err != nil {
			return err
		}
		csync, hasCSync = v, true
	}

	// @signature-params, serialized as RFC 8941 would.
	params := make([]byte, 0, 128+len(key.ID))
	params = append(params, `("@method" "@target-uri"`...)
	if withBody {
		params = append(params, ` "content-digest"`...)
	}
	if hasCSync {
		params = append(params, ` "collection-synchronization"`...)
	}
	params = append(params, ");created="...)
	params = strconv.AppendInt(params, now.Unix(), 10)
	params = append(params, `;keyid="`...)
	params = appendSFStringBody(params, key.ID)
	params = append(params, `";alg="`...)
	params = append(params, algName...)
	params = append(params, '"')

	scheme := strings.ToLower(req.URL.Scheme)
	host := requestHost(req)
	reqURI := req.URL.RequestURI()
	base := make([]byte, 0, 64+len(method)+len(scheme)+len(host)+len(reqURI)+len(digest)+len(csync)+len(params)+80)
	base = append(base, `"@method": `...)
	base = append(base, method...)
	base = append(base, "\n\"@target-uri\": "...)
	base = append(base, scheme...)
	base = append(base, "://"...)
	base = append(base, host...)
	base = append(base, reqURI...)
	if withBody {
		base = append(base, "\n\"content-digest\": "...)
		base = append(base, digest...)
	}
	if hasCSync {
		base = append(base, "\n\"collection-synchronization\": "...)
		base = append(base, csync...)
	}
	base = append(base, "\n\"@signature-params\": "...)
	base = append(base, params...)

	var sig []byte
	var err error
	if rk, ok := key.Private.(*rsa.PrivateKey); ok {
		h := sha256.Sum256(base)
		sig, err = SignRSASHA256(rk, h[:])
	} else if alg == algRSA { // another crypto.Signer (a KMS handle)
		h := sha256.Sum256(base)
		sig, err = key.Private.Sign(rand.Reader, h[:], crypto.SHA256)
	} else {
		sig, err = key.Private.Sign(rand.Reader, base, crypto.Hash(0))
	}
	if err != nil {
		return errf(ReasonUnsupported, "sign: %v", err)
	}

	sigHdr := make([]byte, 0, len(label)+3+base64.StdEncoding.EncodedLen(len(sig)))
	sigHdr = append(sigHdr, label+"=:"...)
	sigHdr = base64.StdEncoding.AppendEncode(sigHdr, sig)
	sigHdr = append(sigHdr, ':')
	req.Header["Signature-Input"] = []string{label + "=" + string(params)}
	req.Header["Signature"] = []string{string(sigHdr)}
	return nil
}

// isSFString reports whether s can be an RFC 8941 sf-string: printable
// ASCII only.
func isSFString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// appendSFStringBody appends s with '"' and '\' escaped (no quotes).
func appendSFStringBody(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}

// parseRFC9421 reads Signature-Input and Signature and builds the signature
// base of the first label, per RFC 9421 §2.5 and §3.2.
func parseRFC9421(r *http.Request, opts Options, now time.Time) (*Signed, error) {
	lbl, il, sigBytes, err := rfc9421Headers(r)
	if err != nil {
		return nil, err
	}
	s := &Signed{Scheme: RFC9421, Label: lbl, sig: sigBytes}
	expires, hasExpires, err := s.readParams(il)
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(opts.Scheme)
	if scheme == "" {
		scheme = "https"
	}
	if s.base, err = s.signatureBase(r, il, scheme); err != nil {
		return nil, err
	}
	if err := checkWindow(now, s.Created, true, expires, hasExpires); err != nil {
		return nil, err
	}
	return s, nil
}

// rfc9421Headers reads Signature-Input and Signature: the label of the
// signature to check, its covered components with their parameters, and
// the signature's bytes.
func rfc9421Headers(r *http.Request) (string, httpsfv.InnerList, []byte, error) {
	var none httpsfv.InnerList
	inputs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil {
		return "", none, nil, errf(ReasonMalformed, "Signature-Input is not a valid RFC 8941 dictionary: %v", err)
	}
	names := inputs.Names()
	if len(names) == 0 {
		return "", none, nil, errf(ReasonMalformed, "Signature-Input is empty")
	}
	// Mastodon accepts exactly one signature; with several, use the
	// first rather than guessing which one the sender meant.
	lbl := names[0]
	m, _ := inputs.Get(lbl)
	il, ok := m.(httpsfv.InnerList)
	if !ok || il.Params == nil {
		return "", none, nil, errf(ReasonMalformed, "Signature-Input %q is not an inner list", lbl)
	}

	sigs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature"))
	if err != nil {
		return "", none, nil, errf(ReasonMalformed, "Signature is not a valid RFC 8941 dictionary: %v", err)
	}
	sm, ok := sigs.Get(lbl)
	if !ok {
		return "", none, nil, errf(ReasonMalformed, "no Signature for label %q", lbl)
	}
	sit, ok := sm.(httpsfv.Item)
	if !ok {
		return "", none, nil, errf(ReasonMalformed, "Signature %q is not a byte sequence", lbl)
	}
	sigBytes, ok := sit.Value.([]byte)
	if !ok || len(sigBytes) == 0 {
		return "", none, nil, errf(ReasonMalformed, "Signature %q is not a byte sequence", lbl)
	}
	return lbl, il, sigBytes, nil
}

// readParams reads the signature's parameters into s: keyid and created
// are required (Mastodon), alg and expires optional, anything else (nonce,
// tag) is only signed. It returns expires, if there is one.
func (s *Signed) readParams(il httpsfv.InnerList) (expires time.Time, hasExpires bool, err error) {
	lbl := s.Label
	if v, ok := il.Params.Get("keyid"); ok {
		s.KeyID, _ = v.(string)
	}
	if s.KeyID == "" {
		return expires, false, errf(ReasonMalformed, "Signature-Input %q has no keyid", lbl)
	}
	cv, ok := il.Params.Get("created")
	if !ok {
		return expires, false, errf(ReasonMalformed, "Signature-Input %q has no created", lbl)
	}
	createdUnix, ok := cv.(int64)
	if !ok || !saneUnix(createdUnix) {
		return expires, false, errf(ReasonMalformed, "Signature-Input %q: created is not a timestamp", lbl)
	}
	s.Created = time.Unix(createdUnix, 0)
	if ev, ok := il.Params.Get("expires"); ok {
		e, ok := ev.(int64)
		if !ok || !saneUnix(e) {
			return expires, false, errf(ReasonMalformed, "Signature-Input %q: expires is not a timestamp", lbl)
		}
		expires, hasExpires = time.Unix(e, 0), true
	}
	if av, ok := il.Params.Get("alg"); ok {
		a, _ := av.(string)
		s.Algorithm = a
		switch a {
		case algNameRSA:
			s.declared = algRSA
		case algNameEd25519:
			s.declared = algEd25519
		default:
			return expires, false, errf(ReasonUnsupported, "unsupported alg %q (only %s, %s)", a, algNameRSA, algNameEd25519)
		}
	}
	return expires, hasExpires, nil
}

// signatureBase builds the signature base (RFC 9421 §2.5) of r over the
// covered components il lists, recording them in s.components.
func (s *Signed) signatureBase(r *http.Request, il httpsfv.InnerList, scheme string) ([]byte, error) {
	if len(il.Items) > maxComponents {
		return nil, errf(ReasonMalformed, "%d covered components, more than %d", len(il.Items), maxComponents)
	}
	s.components = make([]string, 0, len(il.Items))
	base := make([]byte, 0, 512)
	for _, it := range il.Items {
		name, ok := it.Value.(string)
		if !ok {
			return nil, errf(ReasonMalformed, "covered component %v is not a string", it.Value)
		}
		if it.Params != nil && len(it.Params.Names()) > 0 {
			return nil, errf(ReasonUnsupported, "component parameters on %q are not supported", name)
		}
		for _, c := range s.components {
			if c == name {
				return nil, errf(ReasonMalformed, "component %q is covered twice", name)
			}
		}
		s.components = append(s.components, name)
		base = append(base, '"')
		base = append(base, name...)
		base = append(base, `": `...)
		v, err := componentValue(r, name, scheme)
		if err != nil {
			return nil, err
		}
		base = append(base, v...)
		base = append(base, '\n')
	}
	// The signed parameters are the parsed member re-serialized, which is
	// what RFC 9421 §2.3 defines (and gives B.2.6's exact bytes).
	sp, err := httpsfv.Marshal(il)
	if err != nil {
		return nil, errf(ReasonMalformed, "Signature-Input %q cannot be serialized: %v", s.Label, err)
	}
	base = append(base, `"@signature-params": `...)
	return append(base, sp...), nil
}

// componentValue is a covered component's value in the signature base: a
// derived component's (@method, @target-uri, ...) or a header field's.
func componentValue(r *http.Request, name, scheme string) (string, error) {
	switch name {
	case "@method":
		return r.Method, nil
	case "@target-uri":
		return scheme + "://" + r.Host + r.URL.RequestURI(), nil
	case "@authority":
		return authority(scheme, r.Host), nil
	case "@scheme":
		return scheme, nil
	case "@request-target":
		return r.URL.RequestURI(), nil
	case "@path":
		return escapedPath(r), nil
	case "@query":
		return "?" + r.URL.RawQuery, nil
	}
	if strings.HasPrefix(name, "@") {
		return "", errf(ReasonUnsupported, "derived component %q is not supported", name)
	}
	if !validFieldName(name) {
		return "", errf(ReasonMalformed, "covered field name %q is not a lowercase token", name)
	}
	return headerValue(r, name)
}

// authority is @authority: the Host lowercased, without the scheme's
// default port (RFC 9421 §2.2.3, RFC 9110 §4.2.3).
func authority(scheme, host string) string {
	host = strings.ToLower(host)
	switch {
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	}
	return host
}

// validFieldName reports whether name is a non-empty lowercase token, the
// only form RFC 9421 allows for field-name component identifiers.
func validFieldName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isTchar(c) || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
