package delivery

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
)

// BenchmarkPost is one delivery's hot path: the attempt's request built
// around the shared body, signed (draft-cavage, RSA-2048, as every host
// gets until it shows evidence of more), sent over a kept-alive
// connection to a loopback inbox that answers 202, and the answer read.
// allocs/op counts the whole process, the httptest server's side of the
// exchange included (about half of it); compare runs, not absolutes.
func BenchmarkPost(b *testing.B) {
	for _, scheme := range []signature.Scheme{signature.Cavage, signature.RFC9421} {
		b.Run(string(scheme), func(b *testing.B) { benchPost(b, scheme) })
	}
}

func benchPost(b *testing.B, scheme signature.Scheme) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	pk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	r := &Runner{
		cfg:     Config{Client: federation.NewClient(federation.ClientOptions{AllowPrivate: true, AllowHTTP: true, UserAgent: "bench"}), Now: time.Now},
		global:  make(chan struct{}, 1),
		signers: make(chan struct{}, 1),
	}
	body := []byte(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","id":"http://a.example/c/1","object":{"type":"Note","content":"` + strings.Repeat("x", 1200) + `"}}`)
	key := signature.Key{ID: "http://a.example/users/alice#main-key", Private: pk}
	stop := make(chan struct{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		status, _, _, err := r.post(ctx, stop, srv.URL+"/inbox", body, key, scheme, "", "")
		if err != nil || status != http.StatusAccepted {
			b.Fatalf("post: %d %v", status, err)
		}
	}
}
