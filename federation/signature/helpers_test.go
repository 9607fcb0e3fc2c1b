package signature

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fixed RSA-2048 key from testdata (generating one per run would make the
// tests slow under -race) and an Ed25519 key from a fixed seed.
var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
	edKey   = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
)

func testRSA(tb testing.TB) *rsa.PrivateKey {
	tb.Helper()
	rsaOnce.Do(func() {
		b, err := os.ReadFile("testdata/rsa2048.pem")
		if err != nil {
			panic(err)
		}
		blk, _ := pem.Decode(b)
		k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
		if err != nil {
			panic(err)
		}
		rsaKey = k
	})
	return rsaKey
}

// testKey is one signing key with its public half, for table tests.
type testKey struct {
	name string
	key  Key
	pub  any
}

func testKeys(tb testing.TB) []testKey {
	r := testRSA(tb)
	return []testKey{
		{"rsa2048", Key{ID: "https://a.example/users/alice#main-key", Private: r}, &r.PublicKey},
		{"ed25519", Key{ID: "https://a.example/users/alice#ed25519-key", Private: edKey}, edKey.Public()},
	}
}

// fixedNow is the clock of every test that does not need the real one.
var fixedNow = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

const testBody = `{"@context":"https://www.w3.org/ns/activitystreams","type":"Follow","id":"https://a.example/f/1"}`

// newClientRequest builds an outbound request the way the delivery code does.
func newClientRequest(tb testing.TB, method, url, body string) *http.Request {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/activity+json")
	} else {
		req.Header.Set("Accept", "application/activity+json, application/ld+json")
	}
	return req
}

// toWire serializes a client request exactly as net/http sends it.
func toWire(tb testing.TB, req *http.Request) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// fromWire parses raw bytes the way net/http's server does, returning the
// server-side request and its body.
func fromWire(raw []byte) (*http.Request, []byte, error) {
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, nil, err
	}
	return r, body, nil
}

// signAndReceive signs a client request and returns the server's view.
func signAndReceive(tb testing.TB, method, url, body string, k Key, scheme Scheme) (*http.Request, []byte) {
	tb.Helper()
	req := newClientRequest(tb, method, url, body)
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	if err := Sign(req, b, k, scheme, fixedNow); err != nil {
		tb.Fatal(err)
	}
	r, rb, err := fromWire(toWire(tb, req))
	if err != nil {
		tb.Fatal(err)
	}
	return r, rb
}

// parseVerify is the inbox's sequence.
func parseVerify(r *http.Request, body []byte, pub any, opts Options) error {
	s, err := Parse(r, body, opts)
	if err != nil {
		return err
	}
	return s.Verify(pub)
}

var httpsOpts = Options{Now: fixedNow, Scheme: "https"}
