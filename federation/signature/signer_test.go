package signature

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"io"
	"net/http"
	"testing"

	"github.com/superseriousbusiness/httpsig"
)

// stdSigner hides an *rsa.PrivateKey behind crypto.Signer, so RFC 9421
// signing takes its KMS path and signs through crypto/rsa whatever the
// build: the reference for that scheme.
type stdSigner struct{ k *rsa.PrivateKey }

func (s stdSigner) Public() crypto.PublicKey { return &s.k.PublicKey }
func (s stdSigner) Sign(r io.Reader, d []byte, o crypto.SignerOpts) ([]byte, error) {
	return s.k.Sign(r, d, o)
}

// TestSignMatchesReference: RSA signatures made through SignRSASHA256
// (crypto/rsa in a default build, internal/rsaz with the tag rsaz) are the
// bytes the reference path makes, header for header, and verify: for
// draft-cavage the reference is httpsig (signCavageHTTPSig, which signs
// with crypto/rsa itself), for RFC 9421 a crypto.Signer wrapping the same
// key. In a default build this also proves cavagersa.go writes what
// httpsig writes, so the rsaz build changes no byte on the wire.
func TestSignMatchesReference(t *testing.T) {
	priv := testRSA(t)
	const id = "https://a.example/users/alice#main-key"
	cases := []struct {
		name, method, url, csync string
		body                     []byte
	}{
		{"post", http.MethodPost, "https://b.example/users/bob/inbox", "", []byte(testBody)},
		{"post, empty body", http.MethodPost, "https://b.example/inbox", "", nil},
		{"post, query and escapes", http.MethodPost, "https://b.example:8443/users/b%2Fob/inbox?page=2&x=%20y", "", []byte(testBody)},
		{"post, collection sync", http.MethodPost, "https://b.example/inbox", `collectionId="https://a.example/users/alice/followers", digest="00"`, []byte(testBody)},
		{"get", http.MethodGet, "https://b.example/users/bob", "", nil},
		{"get, empty path", http.MethodGet, "https://b.example?q", "", nil},
	}
	wire := []string{"Host", "Date", "Digest", "Content-Digest", "Signature", "Signature-Input"}
	for _, scheme := range []Scheme{Cavage, RFC9421} {
		for _, c := range cases {
			t.Run(string(scheme)+"/"+c.name, func(t *testing.T) {
				mk := func() *http.Request {
					req := newClientRequest(t, c.method, c.url, string(c.body))
					if c.csync != "" {
						req.Header.Set(collectionSync, c.csync)
					}
					return req
				}
				got, want := mk(), mk()
				if err := Sign(got, c.body, Key{ID: id, Private: priv}, scheme, fixedNow); err != nil {
					t.Fatal(err)
				}
				if err := signReference(want, c.body, Key{ID: id, Private: priv}, scheme); err != nil {
					t.Fatal(err)
				}
				if len(got.Header.Values("Signature")) != 1 {
					t.Fatalf("Signature headers %q, want one", got.Header.Values("Signature"))
				}
				compare := func(what string, got *http.Request) {
					for _, h := range wire {
						if g, w := got.Header.Values(h), want.Header.Values(h); !equalStrings(g, w) {
							t.Errorf("%s, %s: got %q, reference %q", what, h, g, w)
						}
					}
				}
				compare("Sign", got)
				if scheme == Cavage {
					// cavagersa.go directly, so a default build,
					// which signs through httpsig, checks it too.
					own := mk()
					headers, body := cavageHeaders(own, c.body, fixedNow)
					if err := signCavageRSA(own, body, headers, priv, id); err != nil {
						t.Fatal(err)
					}
					compare("signCavageRSA", own)
				}
				r, body, err := fromWire(toWire(t, got))
				if err != nil {
					t.Fatal(err)
				}
				if err := parseVerify(r, body, &priv.PublicKey, httpsOpts); err != nil {
					t.Fatalf("verify: %v", err)
				}
			})
		}
	}
}

// signReference signs req as a default build's Sign does, without
// SignRSASHA256.
func signReference(req *http.Request, body []byte, key Key, scheme Scheme) error {
	if scheme == RFC9421 {
		key.Private = stdSigner{key.Private.(*rsa.PrivateKey)}
		return Sign(req, body, key, scheme, fixedNow)
	}
	// signCavage's steps, with the RSA path httpsig's whatever the build.
	for _, h := range signatureHeaders {
		delete(req.Header, h)
	}
	headers, body := cavageHeaders(req, body, fixedNow)
	return signCavageHTTPSig(req, body, headers, httpsig.RSA_SHA256, key.Private, key.ID)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSignRSASHA256 is rsa.SignPKCS1v15 for every build, and refuses what
// crypto/rsa refuses.
func TestSignRSASHA256(t *testing.T) {
	priv := testRSA(t)
	for _, msg := range []string{"", "a", testBody} {
		d := sha256.Sum256([]byte(msg))
		got, err := SignRSASHA256(priv, d[:])
		if err != nil {
			t.Fatal(err)
		}
		want, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, d[:])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%q: signature differs from crypto/rsa's", msg)
		}
	}
	if _, err := SignRSASHA256(priv, []byte("short")); err == nil {
		t.Fatal("a 5-byte digest was signed")
	}
}
