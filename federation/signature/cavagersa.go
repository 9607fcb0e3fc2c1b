package signature

import (
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/textproto"
	"strings"
)

// signCavageRSA is signCavage's RSA path without httpsig, whose RSA
// algorithm calls rsa.SignPKCS1v15 itself and so cannot sign through
// SignRSASHA256. Builds whose SignRSASHA256 is not crypto/rsa use it
// (ownCavageRSA); it writes what signCavageHTTPSig writes, byte for byte
// (TestSignMatchesReference): the Digest when body is not nil, then a
// Signature header laid out as httpsig's setSignatureHeader lays it out,
// with "hs2019" as the algorithm and the signing string of its
// signatureString (values trimmed, repeated headers joined by ", ", no
// (created) or (expires): signCavage signs neither).
func signCavageRSA(req *http.Request, body []byte, headers []string, priv *rsa.PrivateKey, keyID string) error {
	if body != nil {
		sum := sha256.Sum256(body)
		req.Header["Digest"] = []string{digestHeaderValue(&sum)}
	}
	var b strings.Builder
	for i, h := range headers {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(h)
		b.WriteString(": ")
		if h == "(request-target)" {
			// httpsig's addRequestTarget on the escaped path
			// (signCavageHTTPSig hands it that), query only when
			// there is one.
			b.WriteString(strings.ToLower(req.Method))
			b.WriteByte(' ')
			b.WriteString(escapedPath(req))
			if req.URL.RawQuery != "" {
				b.WriteByte('?')
				b.WriteString(req.URL.RawQuery)
			}
			continue
		}
		vals, ok := req.Header[textproto.CanonicalMIMEHeaderKey(h)]
		if !ok {
			return errf(ReasonMalformed, "sign: missing header %q", h)
		}
		for j, v := range vals {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strings.TrimSpace(v))
		}
	}
	digest := sha256.Sum256([]byte(b.String()))
	sig, err := SignRSASHA256(priv, digest[:])
	if err != nil {
		return errf(ReasonMalformed, "sign: %v", err)
	}
	hdr := make([]byte, 0, 64+len(keyID)+16*len(headers)+base64.StdEncoding.EncodedLen(len(sig)))
	hdr = append(hdr, `keyId="`...)
	hdr = append(hdr, keyID...)
	hdr = append(hdr, `",algorithm="hs2019",headers="`...)
	hdr = append(hdr, strings.Join(headers, " ")...)
	hdr = append(hdr, `",signature="`...)
	hdr = base64.StdEncoding.AppendEncode(hdr, sig)
	hdr = append(hdr, '"')
	req.Header["Signature"] = []string{string(hdr)}
	return nil
}
