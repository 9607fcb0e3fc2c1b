package signature

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"net/http"
	"time"
)

// Scheme names an HTTP signature scheme.
type Scheme string

// The two schemes Herald speaks.
const (
	// Cavage is draft-cavage-http-signatures-12, the "Signature:" header
	// every Mastodon version sends and accepts.
	Cavage Scheme = "draft-cavage"
	// RFC9421 is RFC 9421 HTTP Message Signatures ("Signature-Input:" and
	// "Signature:"), accepted by Mastodon 4.5+.
	RFC9421 Scheme = "rfc9421"
)

// Key is a signing key. ID is the keyId published in the actor document,
// e.g. "https://h.example/users/alice#main-key". Private is an
// *rsa.PrivateKey or an ed25519.PrivateKey; RFC 9421 signing also accepts
// any crypto.Signer whose public key is RSA or Ed25519 (e.g. a KMS handle),
// draft-cavage signing needs the concrete types because httpsig does.
type Key struct {
	ID      string
	Private crypto.Signer
}

// signatureHeaders are the headers Sign owns. They are removed before
// signing so that re-signing a request for a retry (or signing it with the
// other scheme after a 401, "double knocking") starts afresh: httpsig refuses
// to add a Digest that is already there, and a stale Signature-Input would
// make the receiver pick the RFC 9421 path.
var signatureHeaders = [...]string{"Signature", "Signature-Input", "Digest", "Content-Digest"}

// collectionSync is the FEP-8fcf header; when present it is signed so the
// receiver can trust the followers digest it carries (as Mastodon does).
const collectionSync = "Collection-Synchronization"

// Sign signs req, whose body is body (nil for a GET), with key under scheme
// at time now. It removes any earlier Signature, Signature-Input, Digest and
// Content-Digest headers first, so a retry signs afresh. GET and HEAD
// requests are signed without a body digest; every other method gets one
// (of an empty body if body is nil), because Mastodon requires the digest to
// be signed on POST.
func Sign(req *http.Request, body []byte, key Key, scheme Scheme, now time.Time) error {
	if req == nil || req.URL == nil {
		return errf(ReasonMalformed, "sign: nil request or URL")
	}
	if key.Private == nil || key.ID == "" {
		return errf(ReasonMalformed, "sign: key without id or private key")
	}
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	if req.Method == "" {
		// net/http sends "" as GET; the signature must say so too.
		req.Method = http.MethodGet
	}
	for _, h := range signatureHeaders {
		delete(req.Header, h)
	}
	switch scheme {
	case Cavage:
		return signCavage(req, body, key, now)
	case RFC9421:
		return signRFC9421(req, body, key, now)
	default:
		return errf(ReasonUnsupported, "sign: unknown scheme %q", scheme)
	}
}

// hasBody reports whether requests with this method are signed with a body
// digest. Only the safe methods we send without a body are exempt.
func hasBody(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// requestHost is the Host the Go client will put on the wire: req.Host when
// set, else req.URL.Host. Signing anything else would sign a value the
// receiver never sees.
func requestHost(req *http.Request) string {
	if req.Host != "" {
		return req.Host
	}
	return req.URL.Host
}

// keyAlg identifies the signing algorithm from the key type, never from
// a name: an RSA key always means RSASSA-PKCS1-v1_5 with SHA-256.
type keyAlg int

const (
	algUnknown keyAlg = iota
	algRSA
	algEd25519
)

// algOfPublic maps a public key to its algorithm.
func algOfPublic(pub crypto.PublicKey) keyAlg {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k != nil {
			return algRSA
		}
	case ed25519.PublicKey:
		if len(k) == ed25519.PublicKeySize {
			return algEd25519
		}
	}
	return algUnknown
}
