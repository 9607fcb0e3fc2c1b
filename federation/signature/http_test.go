package signature

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHTTPRoundTrip sends signed requests over a real loopback connection
// to a handler that runs Parse+Verify, for both schemes and both methods.
// httptest.NewServer listens on 127.0.0.1 only.
func TestHTTPRoundTrip(t *testing.T) {
	keys := testKeys(t)
	pubs := map[string]any{}
	for _, k := range keys {
		pubs[k.key.ID] = k.pub
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s, err := Parse(r, body, Options{Now: fixedNow, Scheme: "http"})
		if err == nil {
			err = s.Verify(pubs[s.KeyID])
		}
		if err != nil {
			code := http.StatusUnauthorized
			if e, ok := err.(*Error); ok && e.Malformed() {
				code = http.StatusBadRequest
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.Header().Set("X-Scheme", string(s.Scheme))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	client := srv.Client()

	for _, k := range keys {
		for _, scheme := range []Scheme{Cavage, RFC9421} {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				t.Run(k.name+"/"+string(scheme)+"/"+method, func(t *testing.T) {
					var body []byte
					if method == http.MethodPost {
						body = []byte(testBody)
					}
					req := newClientRequest(t, method, srv.URL+"/users/bob/inbox?page=1", "")
					req.Body = io.NopCloser(bytes.NewReader(body))
					req.ContentLength = int64(len(body))
					if err := Sign(req, body, k.key, scheme, fixedNow); err != nil {
						t.Fatal(err)
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					msg, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusAccepted || resp.Header.Get("X-Scheme") != string(scheme) {
						t.Fatalf("status %d, scheme %q: %s", resp.StatusCode, resp.Header.Get("X-Scheme"), msg)
					}

					// The same request with a changed body is refused.
					if method == http.MethodPost {
						bad := bytes.Clone(body)
						bad[len(bad)-2] = 'X'
						req.Body = io.NopCloser(bytes.NewReader(bad))
						resp, err := client.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						resp.Body.Close()
						if resp.StatusCode != http.StatusUnauthorized {
							t.Fatalf("tampered body: status %d", resp.StatusCode)
						}
					}
				})
			}
		}
	}
}
