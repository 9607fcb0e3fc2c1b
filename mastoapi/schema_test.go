package mastoapi

import (
	"slices"
	"strings"
	"testing"

	"herald/internal/openapitest"
)

// TestSchemaDescribesEveryRoute: Herald's description of the Mastodon API
// (testdata/mastodon-api/openapi.yaml, which the tests hold answers
// against) and the route table agree: every route has its operation, and
// every operation is a route. A new endpoint is described when it is
// added, and the answers of the flows stay checked.
func TestSchemaDescribesEveryRoute(t *testing.T) {
	doc := openapitest.Load(t, openapitest.HeraldSchema(), "http://127.0.0.1:1").Doc()
	var described []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described = append(described, strings.ToUpper(method)+" "+path)
		}
	}
	var served []string
	for _, rt := range (&Handler{}).routes() {
		served = append(served, rt.Method+" "+rt.Pattern)
	}
	slices.Sort(described)
	slices.Sort(served)
	for _, op := range served {
		if !slices.Contains(described, op) {
			t.Errorf("%s is served but not described in testdata/mastodon-api/openapi.yaml", op)
		}
	}
	for _, op := range described {
		if !slices.Contains(served, op) {
			t.Errorf("%s is described but not served", op)
		}
	}
}
