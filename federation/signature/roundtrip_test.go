package signature

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestSignVerifyRoundTrip: our Sign output passes our Parse+Verify for both
// schemes, both key types, POST and GET, with and without a query string
// (and with a percent-escaped path, which httpsig alone would mis-sign).
func TestSignVerifyRoundTrip(t *testing.T) {
	urls := []string{
		"https://b.example/users/bob/inbox",
		"https://b.example/users/bob/inbox?page=2&x=%20y",
		"https://b.example:8443/users/b%2Fob/outbox?q",
	}
	for _, k := range testKeys(t) {
		for _, scheme := range []Scheme{Cavage, RFC9421} {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				for _, u := range urls {
					name := k.name + "/" + string(scheme) + "/" + method + "/" + u
					t.Run(name, func(t *testing.T) {
						body := ""
						if method == http.MethodPost {
							body = testBody
						}
						r, b := signAndReceive(t, method, u, body, k.key, scheme)
						s, err := Parse(r, b, httpsOpts)
						if err != nil {
							t.Fatalf("Parse: %v", err)
						}
						if s.KeyID != k.key.ID || s.Scheme != scheme {
							t.Fatalf("got keyId %q scheme %q", s.KeyID, s.Scheme)
						}
						if err := s.Verify(k.pub); err != nil {
							t.Fatalf("Verify: %v", err)
						}
						// The other key must not verify.
						other := testKeys(t)[0].pub
						if k.name == "rsa2048" {
							other = testKeys(t)[1].pub
						}
						if err := s.Verify(other); ReasonOf(err) != ReasonBadSignature {
							t.Fatalf("Verify with the wrong key: %v", err)
						}
					})
				}
			}
		}
	}
}

// TestSignHeaders pins the wire shape Mastodon expects.
func TestSignHeaders(t *testing.T) {
	k := testKeys(t)[0].key
	req := newClientRequest(t, http.MethodPost, "https://b.example/inbox?a=1", testBody)
	req.Header.Set("Collection-Synchronization", `collectionId="https://a.example/users/alice/followers", digest="00", url="https://a.example/x"`)
	if err := Sign(req, []byte(testBody), k, Cavage, fixedNow); err != nil {
		t.Fatal(err)
	}
	sig := req.Header.Get("Signature")
	for _, want := range []string{
		`keyId="https://a.example/users/alice#main-key"`,
		`headers="(request-target) host date digest content-type collection-synchronization"`,
	} {
		if !strings.Contains(sig, want) {
			t.Errorf("Signature %q lacks %s", sig, want)
		}
	}
	if got, want := req.Header.Get("Date"), "Tue, 04 Mar 2025 05:06:07 GMT"; got != want {
		t.Errorf("Date = %q, want %q", got, want)
	}
	if d := req.Header.Get("Digest"); !strings.HasPrefix(d, "SHA-256=") {
		t.Errorf("Digest = %q", d)
	}

	// Re-signing the same request with RFC 9421 replaces everything.
	if err := Sign(req, []byte(testBody), k, RFC9421, fixedNow); err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Digest") != "" || strings.Contains(req.Header.Get("Signature"), "keyId") {
		t.Fatalf("old cavage headers survived: %v", req.Header)
	}
	want := `sig1=("@method" "@target-uri" "content-digest" "collection-synchronization");created=1741064767;keyid="https://a.example/users/alice#main-key";alg="rsa-v1_5-sha256"`
	if got := req.Header.Get("Signature-Input"); got != want {
		t.Errorf("Signature-Input\n got %s\nwant %s", got, want)
	}
	if cd := req.Header.Get("Content-Digest"); !strings.HasPrefix(cd, "sha-256=:") || !strings.HasSuffix(cd, ":") {
		t.Errorf("Content-Digest = %q", cd)
	}

	// GET: Accept signed, no digest.
	get := newClientRequest(t, http.MethodGet, "https://b.example/users/bob", "")
	if err := Sign(get, nil, k, Cavage, fixedNow); err != nil {
		t.Fatal(err)
	}
	if s := get.Header.Get("Signature"); !strings.Contains(s, `headers="(request-target) host date accept"`) || get.Header.Get("Digest") != "" {
		t.Errorf("GET signed as %q, digest %q", s, get.Header.Get("Digest"))
	}
	if err := Sign(get, nil, testKeys(t)[1].key, RFC9421, fixedNow); err != nil {
		t.Fatal(err)
	}
	if s := get.Header.Get("Signature-Input"); !strings.HasPrefix(s, `sig1=("@method" "@target-uri");created=`) || !strings.HasSuffix(s, `alg="ed25519"`) {
		t.Errorf("GET Signature-Input %q", s)
	}
}

// TestSingleByteChanges flips every byte of the method, path and query,
// Host, Date (draft-cavage) or Signature-Input (RFC 9421), the digest header
// and the body on the wire, and requires each change to be rejected.
func TestSingleByteChanges(t *testing.T) {
	for _, k := range testKeys(t) {
		for _, scheme := range []Scheme{Cavage, RFC9421} {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				t.Run(k.name+"/"+string(scheme)+"/"+method, func(t *testing.T) {
					body := ""
					if method == http.MethodPost {
						body = testBody
					}
					req := newClientRequest(t, method, "https://b.example/users/bob/inbox?page=2", body)
					if err := Sign(req, []byte(body), k.key, scheme, fixedNow); err != nil {
						t.Fatal(err)
					}
					raw := toWire(t, req)
					r, b, err := fromWire(raw)
					if err != nil {
						t.Fatal(err)
					}
					if err := parseVerify(r, b, k.pub, httpsOpts); err != nil {
						t.Fatalf("unmodified request fails: %v", err)
					}
					regions := [][]byte{
						[]byte(method + " /users/bob/inbox?page=2"),
						[]byte("Host: b.example"),
					}
					if scheme == Cavage {
						regions = append(regions, []byte("Date: "+req.Header.Get("Date")))
						if method == http.MethodPost {
							regions = append(regions, []byte("Digest: "+req.Header.Get("Digest")))
						}
					} else {
						regions = append(regions, []byte("Signature-Input: "+req.Header.Get("Signature-Input")))
						if method == http.MethodPost {
							regions = append(regions, []byte("Content-Digest: "+req.Header.Get("Content-Digest")))
						}
					}
					if body != "" {
						regions = append(regions, []byte("\r\n\r\n"+body))
					}
					n := 0
					for _, reg := range regions {
						at := bytes.Index(raw, reg)
						if at < 0 {
							t.Fatalf("region %q not on the wire", reg)
						}
						// Skip header names and the separator itself:
						// only values are under test.
						start := at
						if i := bytes.Index(reg, []byte(": ")); i >= 0 && !bytes.HasPrefix(reg, []byte(method)) {
							start = at + i + 2
						}
						if bytes.HasPrefix(reg, []byte("\r\n\r\n")) {
							start = at + 4
						}
						for p := start; p < at+len(reg); p++ {
							mut := bytes.Clone(raw)
							mut[p] = flip(mut[p])
							n++
							r, b, err := fromWire(mut)
							if err != nil {
								continue // the server would reject it too
							}
							if err := parseVerify(r, b, k.pub, httpsOpts); err == nil {
								t.Errorf("change at %d (%q -> %q) in %q still verifies", p-at, raw[p], mut[p], reg)
							}
						}
					}
					if n < 40 {
						t.Fatalf("only %d mutations", n)
					}
				})
			}
		}
	}
}

// flip replaces a byte by a different one that still looks like a value
// character, so most mutations reach the verifier rather than the parser.
func flip(c byte) byte {
	if c == 'x' || c == 'X' {
		return 'y'
	}
	return 'x'
}

// TestSignEmptyMethod: net/http sends an empty Method as GET, so the
// signature must cover "get", not "".
func TestSignEmptyMethod(t *testing.T) {
	for _, k := range testKeys(t) {
		for _, scheme := range []Scheme{Cavage, RFC9421} {
			req := newClientRequest(t, http.MethodGet, "https://b.example/users/bob?x=1", "")
			req.Method = ""
			if err := Sign(req, nil, k.key, scheme, fixedNow); err != nil {
				t.Fatal(err)
			}
			r, b, err := fromWire(toWire(t, req))
			if err != nil {
				t.Fatal(err)
			}
			if err := parseVerify(r, b, k.pub, httpsOpts); err != nil {
				t.Errorf("%s/%s: %v", k.name, scheme, err)
			}
		}
	}
}
