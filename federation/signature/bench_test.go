package signature

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"net/http"
	"testing"
)

// Benchmarks use RSA-2048, the key size Herald and Mastodon generate.
// BenchmarkBareRSASign is the floor: hashing a signing string of the same
// size and one PKCS#1 v1.5 signature. Sign must stay within 1.2x of it,
// because fan-out delivery signs once per inbox.

const benchInbox = "https://b.example/users/bob/inbox"

func benchSign(b *testing.B, scheme Scheme) {
	k := testKeys(b)[0].key
	body := []byte(testBody)
	req := newClientRequest(b, http.MethodPost, benchInbox, testBody)
	b.ReportAllocs()
	for b.Loop() {
		// The same request is re-signed, as a delivery retry does.
		if err := Sign(req, body, k, scheme, fixedNow); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignCavage(b *testing.B)  { benchSign(b, Cavage) }
func BenchmarkSignRFC9421(b *testing.B) { benchSign(b, RFC9421) }

func BenchmarkBareRSASign(b *testing.B) {
	k := testRSA(b)
	// About the size of a cavage signing string for an inbox POST.
	data := []byte("(request-target): post /users/bob/inbox\nhost: b.example\ndate: Tue, 04 Mar 2025 05:06:07 GMT\n" +
		"digest: SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\ncontent-type: application/activity+json")
	b.ReportAllocs()
	for b.Loop() {
		h := sha256.Sum256(data)
		if _, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, h[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func benchVerify(b *testing.B, scheme Scheme) {
	k := testKeys(b)[0]
	r, body := signAndReceive(b, http.MethodPost, benchInbox, testBody, k.key, scheme)
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(r, body, httpsOpts)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Verify(k.pub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyCavage(b *testing.B)  { benchVerify(b, Cavage) }
func BenchmarkVerifyRFC9421(b *testing.B) { benchVerify(b, RFC9421) }
