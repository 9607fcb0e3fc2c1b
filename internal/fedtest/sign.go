package fedtest

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
)

// SignedPost builds a POST of body to url signed by a with scheme at time at.
func SignedPost(t testing.TB, url string, body []byte, a *RemoteActor, scheme signature.Scheme, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/activity+json")
	if err := signature.Sign(req, body, signature.Key{ID: a.KeyID(), Private: a.Key}, scheme, at); err != nil {
		t.Fatal(err)
	}
	return req
}

// SignedPostEd25519 is SignedPost signed with a's Ed25519 Multikey (keyId
// its Multikey id), as Mitra (draft-cavage hs2019) and tootik (RFC 9421
// alg="ed25519") sign.
func SignedPostEd25519(t testing.TB, url string, body []byte, a *RemoteActor, scheme signature.Scheme, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/activity+json")
	if err := signature.Sign(req, body, signature.Key{ID: a.EdKeyID(), Private: a.Ed25519}, scheme, at); err != nil {
		t.Fatal(err)
	}
	return req
}

// SignedGet builds a GET of url signed by a with scheme at time at.
func SignedGet(t testing.TB, url string, a *RemoteActor, scheme signature.Scheme, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/activity+json")
	if err := signature.Sign(req, nil, signature.Key{ID: a.KeyID(), Private: a.Key}, scheme, at); err != nil {
		t.Fatal(err)
	}
	return req
}

var activitySeq atomic.Int64

// Activity builds an activity of typ by a with object, with a fresh id.
func Activity(a *RemoteActor, typ string, object any) map[string]any {
	return map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       fmt.Sprintf("%s/activities/%d", a.ID, activitySeq.Add(1)),
		"type":     typ,
		"actor":    a.ID,
		"object":   object,
	}
}

// VerifyLD checks doc's RsaSignature2017 (a Linked Data Signature, as
// Mastodon verifies it) with the public key pub (PEM).
func VerifyLD(doc map[string]any, pubPEM string) error {
	sig, _ := doc["signature"].(map[string]any)
	if sig["type"] != "RsaSignature2017" {
		return fmt.Errorf("no RsaSignature2017: %v", doc["signature"])
	}
	pub, err := federation.ParsePublicKeyPEM(pubPEM)
	if err != nil {
		return err
	}
	rsaPub, ok := pub.(*rsa.PublicKey)
	if !ok {
		return fmt.Errorf("not an RSA key")
	}
	input, err := federation.LDSigningInput(doc, sig)
	if err != nil {
		return err
	}
	value, _ := sig["signatureValue"].(string)
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(input))
	return rsa.VerifyPKCS1v15(rsaPub, crypto.SHA256, digest[:], raw)
}

// HasPrefix reports whether s starts with any of the prefixes (a small
// helper for checking where deliveries went).
func HasPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
