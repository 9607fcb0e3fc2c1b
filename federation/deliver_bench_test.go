package federation

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkDeliver is one inbox POST over a kept-alive loopback connection
// and its 202, through the delivery transport and through net/http's
// (StandardDelivery): the transport's own cost per delivery, the test
// server's included, without a signature.
func BenchmarkDeliver(b *testing.B) {
	body := strings.Repeat("x", 1500) // a Create's size
	for _, tc := range []struct {
		name string
		std  bool
	}{{"pool", false}, {"std", true}} {
		b.Run(tc.name, func(b *testing.B) {
			s := newCountingServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusAccepted)
			}))
			c := openClient(s.Listener.Addr().String(), ClientOptions{StandardDelivery: tc.std})
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://h1.invalid/inbox", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				resp, err := c.Deliver(req)
				if err != nil || resp.StatusCode != http.StatusAccepted {
					b.Fatal(resp, err)
				}
				resp.Body.Close()
			}
		})
	}
}
