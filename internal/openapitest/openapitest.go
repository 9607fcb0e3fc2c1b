// Package openapitest is test support: it holds recorded HTTP answers
// against an OpenAPI 3.1 description with kin-openapi (JSON Schema
// 2020-12): the status must be one the operation lists and a JSON body
// must match its schema. The masto.js interop test and the client API's
// tests check Herald's Mastodon API with it, against Herald's own
// description (testdata/mastodon-api/openapi.yaml) and, when it is on the
// machine, abraham/mastodon-openapi's.
package openapitest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Exchange is one request and the answer it got.
type Exchange struct {
	Method, Path, RawQuery string
	RequestHeader          http.Header
	Status                 int
	Header                 http.Header
	Body                   []byte
}

// String names an exchange for messages: method, path, the first query
// parameter and the status.
func (e Exchange) String() string {
	q := ""
	if e.RawQuery != "" {
		q = "?" + strings.SplitN(e.RawQuery, "&", 2)[0] + "..."
	}
	return fmt.Sprintf("%s %s%s -> %d", e.Method, e.Path, q, e.Status)
}

// Validator holds answers against one description.
type Validator struct {
	// Name is the description's file name, for messages.
	Name   string
	base   string
	doc    *openapi3.T
	router routers.Router
}

// ErrNotDescribed is an exchange whose path and method the description
// has no operation for.
var ErrNotDescribed = errors.New("not in the description")

// Load reads the description at path for the answers of a server at base
// (its paths are matched as if served there), failing t if it does not
// load or does not validate as OpenAPI.
func Load(t testing.TB, path, base string) *Validator {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	router, err := legacy.NewRouter(doc,
		// abraham/mastodon-openapi's own examples and defaults do not all
		// match its schemas (an integer defaulting to "null"): not what
		// this checks.
		openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation())
	if err != nil {
		t.Fatalf("route %s: %v", path, err)
	}
	return &Validator{Name: filepath.Base(path), base: base, doc: doc, router: router}
}

// Doc is the loaded description.
func (v *Validator) Doc() *openapi3.T { return v.doc }

// Validate checks one exchange against its operation. It returns
// ErrNotDescribed for an exchange the description has no operation for.
func (v *Validator) Validate(e Exchange) error {
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
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		// JSON Schema's uri: an absolute URI (date and date-time
		// kin-openapi checks itself).
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(absoluteURI))}}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts},
		Status:                 e.Status,
		Header:                 e.Header,
		Options:                opts,
	}
	in.SetBodyBytes(e.Body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// absoluteURI is JSON Schema's format uri (RFC 3986's absolute URI: a
// scheme, then anything a URI may hold).
func absoluteURI(s string) error {
	if u, err := url.Parse(s); err != nil || !u.IsAbs() {
		return fmt.Errorf("%q is not an absolute URI", s)
	}
	return nil
}

// HeraldSchema is the path of Herald's own description of its Mastodon
// API, testdata/mastodon-api/openapi.yaml.
func HeraldSchema() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mastodon-api", "openapi.yaml")
}

// UpstreamSchema is the path of abraham/mastodon-openapi's
// dist/schema.json when $HERALD_MASTODON_OPENAPI names one that exists,
// or "". It is never in the repository: it is fetched material, which the
// project does not commit (docs/clients.md).
func UpstreamSchema() string {
	p := os.Getenv("HERALD_MASTODON_OPENAPI")
	if p == "" {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
