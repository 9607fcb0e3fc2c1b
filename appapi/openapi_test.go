package appapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"herald/appapi"
	"herald/internal/fedtest"
)

func openAPI(t *testing.T) *fedtest.OpenAPI {
	t.Helper()
	doc, err := fedtest.ParseOpenAPI(appapi.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The document in the repository, the one Herald serves and the real chi
// routes agree: every route of the app API (under /api/ but not the
// Mastodon client API's, which docs/clients.md describes) is documented,
// and every documented operation is a route.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	h := fedtest.NewHerald(t)
	var routes []string
	err := chi.Walk(h.Srv.Routes(), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route == "/api/openapi.json" || strings.HasPrefix(route, appapi.Prefix+"/actors/") {
			routes = append(routes, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(routes)
	documented := openAPI(t).Operations()
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in appapi/openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("appapi/openapi.json documents %s, which is no route", d)
		}
	}
	if len(routes) < 20 {
		t.Errorf("found only %d API routes: %q", len(routes), routes)
	}

	res, body := h.Do(t, "GET", "/api/openapi.json", "", nil)
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || body != string(file) || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /api/openapi.json: %d %s, not the file in the repository", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// call is one request of TestEveryRouteAnswersAsDocumented.
type call struct {
	method, route string // the documented operation
	path          string // the route filled in; a bare actor path takes the route's rest
	token         string
	body          any    // JSON, or a string sent as it is
	ctype         string // Content-Type; default application/json with a body
	want          int
}

// Every operation of the document answers as documented: each call's
// status is one the operation lists, its JSON body matches the schema
// documented for that status, every operation answers with success at least
// once, and every one refuses a missing token, another actor's token and an
// unknown actor as documented.
func TestEveryRouteAnswersAsDocumented(t *testing.T) {
	w := newWorld(t)
	doc := openAPI(t)
	A := "/api/v1/actors/{name}"
	hooks := A + "/webhooks"
	alice, carol := "/api/v1/actors/alice", "/api/v1/actors/carol"
	calls := []call{
		{"GET", "/api/openapi.json", "/api/openapi.json", "", nil, "", 200},
		{"GET", A, alice, w.h.Token, nil, "", 200},
		{"POST", A + "/notes", alice, w.h.Token, map[string]any{"text": "hello", "to": w.bob.ID, "language": "de"}, "", 201},
		{"POST", A + "/notes", alice, w.h.Token, map[string]any{"text": " "}, "", 400},
		{"POST", A + "/notes", alice, w.h.Token, map[string]any{"text": "hi", "language": "not a language"}, "", 400},
		{"POST", A + "/notes", alice, w.h.Token, map[string]any{"text": "hi", "to": "nobody"}, "", 400},
		{"POST", A + "/notes", alice, w.h.Token, map[string]any{"text": "hi @nobody@127.0.0.1:1"}, "", 400},
		{"GET", A + "/follow_requests", carol, w.carolToken, nil, "", 200},
		{"POST", A + "/follow_requests/accept", carol, w.carolToken, map[string]any{"actor": w.bob.ID}, "", 200},
		{"POST", A + "/follow_requests/reject", carol, w.carolToken, map[string]any{"actor": w.dave.ID}, "", 200},
		{"POST", A + "/follow_requests/accept", carol, w.carolToken, map[string]any{"actor": w.bob.ID}, "", 404},
		{"POST", A + "/follow_requests/reject", carol, w.carolToken, map[string]any{}, "", 400},
		{"POST", A + "/blocks", alice, w.h.Token, map[string]any{"actor": w.eve.ID}, "", 201},
		{"POST", A + "/blocks", alice, w.h.Token, map[string]any{"actor": w.eve.ID}, "", 200},
		{"GET", A + "/blocks", alice, w.h.Token, nil, "", 200},
		{"POST", A + "/blocks", alice, w.h.Token, "not json", "", 400},
		{"POST", A + "/blocks", alice, w.h.Token, `{"actor": "x"}`, "text/plain", 415},
		{"POST", A + "/blocks", alice, w.h.Token, `{"actor": "` + strings.Repeat("x", 70<<10) + `"}`, "", 413},
		{"POST", A + "/blocks", alice, w.h.Token, map[string]any{"actor": "http://127.0.0.1:1/nobody"}, "", 400},
		{"DELETE", A + "/blocks", alice + "/blocks?actor=" + w.eve.ID, w.h.Token, nil, "", 200},
		{"DELETE", A + "/blocks", alice + "/blocks?actor=" + w.eve.ID, w.h.Token, nil, "", 404},
		{"DELETE", A + "/blocks", alice + "/blocks", w.h.Token, nil, "", 400},
		{"POST", A + "/domain_blocks", alice, w.h.Token, map[string]any{"domain": "Spam.Example"}, "", 201},
		{"POST", A + "/domain_blocks", alice, w.h.Token, map[string]any{"domain": "spam.example"}, "", 200},
		{"POST", A + "/domain_blocks", alice, w.h.Token, map[string]any{"domain": "https://spam.example/"}, "", 400},
		{"GET", A + "/domain_blocks", alice, w.h.Token, nil, "", 200},
		{"DELETE", A + "/domain_blocks/{domain}", alice + "/domain_blocks/spam.example", w.h.Token, nil, "", 204},
		{"DELETE", A + "/domain_blocks/{domain}", alice + "/domain_blocks/spam.example", w.h.Token, nil, "", 404},
		{"GET", A + "/deliveries", alice, w.h.Token, nil, "", 200},
		{"GET", A + "/deliveries", alice + "/deliveries?limit=0", w.h.Token, nil, "", 400},
		{"GET", A + "/activities/{id}/deliveries", alice + "/activities/" + w.failedActivity + "/deliveries", w.h.Token, nil, "", 200},
		{"GET", A + "/activities/{id}/deliveries", alice + "/activities/nope/deliveries", w.h.Token, nil, "", 404},
		{"POST", A + "/deliveries/requeue", alice, w.h.Token, map[string]any{"activity": w.h.Inst.ActorID("alice") + "/activities/" + w.failedActivity}, "", 200},
		{"POST", A + "/deliveries/requeue", alice, w.h.Token, map[string]any{"activity": "http://127.0.0.1:1/x"}, "", 404},
		{"POST", A + "/webhooks", alice, w.h.Token, map[string]any{"url": "https://app.example/hook", "events": []string{"inbox.create"}}, "", 201},
		{"POST", A + "/webhooks", alice, w.h.Token, map[string]any{"url": "ftp://app.example/"}, "", 400},
		{"POST", A + "/webhooks", alice, w.h.Token, map[string]any{"url": "https://app.example/", "events": []string{"inbox.boost"}}, "", 400},
		{"GET", hooks, alice, w.h.Token, nil, "", 200},
		{"GET", hooks + "/{id}", alice + "/webhooks/1", w.h.Token, nil, "", 200},
		{"GET", hooks + "/{id}", alice + "/webhooks/99", w.h.Token, nil, "", 404},
		{"GET", hooks + "/{id}", carol + "/webhooks/1", w.carolToken, nil, "", 404},
		{"GET", hooks + "/{id}/deliveries", alice + "/webhooks/1/deliveries?state=pending", w.h.Token, nil, "", 200},
		{"GET", hooks + "/{id}/deliveries", alice + "/webhooks/1/deliveries?state=lost", w.h.Token, nil, "", 400},
		{"POST", hooks + "/{id}/retry", alice + "/webhooks/1/retry", w.h.Token, nil, "", 200},
		{"POST", hooks + "/{id}/retry", alice + "/webhooks/1/retry", w.h.Token, map[string]any{"delivery": 5}, "", 200},
		{"POST", A + "/reports", alice, w.h.Token, map[string]any{"account": w.eve.ID, "posts": []string{w.eve.ID + "/statuses/1"}, "comment": "spam", "forward": true}, "", 201},
		{"POST", A + "/reports", alice, w.h.Token, map[string]any{"account": w.eve.ID}, "", 201},
		{"POST", A + "/reports", alice, w.h.Token, map[string]any{"account": w.h.Inst.ActorID("carol")}, "", 400},
		{"POST", A + "/reports", alice, w.h.Token, map[string]any{"account": w.eve.ID, "posts": []string{"https://elsewhere.example/1"}}, "", 400},
		{"GET", A + "/interaction_requests", alice, w.h.Token, nil, "", 200},
		{"POST", A + "/interaction_requests/{id}/accept", alice + "/interaction_requests/1/accept", w.h.Token, nil, "", 200},
		{"POST", A + "/interaction_requests/{id}/accept", alice + "/interaction_requests/1/accept", w.h.Token, nil, "", 409},
		{"POST", A + "/interaction_requests/{id}/reject", alice + "/interaction_requests/2/reject", w.h.Token, nil, "", 200},
		{"POST", A + "/interaction_requests/{id}/reject", alice + "/interaction_requests/99/reject", w.h.Token, nil, "", 404},
		{"POST", A + "/interaction_requests/{id}/accept", carol + "/interaction_requests/2/accept", w.carolToken, nil, "", 404},
		{"DELETE", hooks + "/{id}", alice + "/webhooks/1", w.h.Token, nil, "", 204},
		{"DELETE", hooks + "/{id}", alice + "/webhooks/1", w.h.Token, nil, "", 404},
	}
	for i := 0; i < 11; i++ {
		want := 201
		if i == 10 {
			want = 409 // the eleventh (webhook 1 was removed above)
		}
		calls = append(calls, call{"POST", hooks, alice, w.h.Token, map[string]any{"url": fmt.Sprintf("https://app.example/%d", i)}, "", want})
	}
	// Every operation but the document itself refuses strangers alike.
	for _, op := range doc.Operations() {
		method, route, _ := strings.Cut(op, " ")
		if route == "/api/openapi.json" {
			continue
		}
		path := strings.NewReplacer("{name}", "alice", "{id}", "1", "{domain}", "spam.example").Replace(route)
		calls = append(calls,
			call{method, route, path, "", nil, "", 401},
			call{method, route, path, w.carolToken, nil, "", 403},
			call{method, route, strings.Replace(path, "/alice", "/nobody", 1), w.h.Token, nil, "", 404})
	}

	succeeded := map[string]bool{}
	for _, c := range calls {
		path := c.path
		if path == alice || path == carol {
			path += strings.TrimPrefix(c.route, A) // the route's rest, no parameters in it
		}
		res, body := w.do(t, c.method, path, c.token, c.body, c.ctype)
		name := c.method + " " + path
		if res.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", name, res.StatusCode, body, c.want)
			continue
		}
		r, documented := doc.Response(c.method, c.route, res.StatusCode)
		if !documented {
			t.Errorf("%s answered %d, which %s %s does not document", name, res.StatusCode, c.method, c.route)
			continue
		}
		if res.StatusCode < 300 {
			succeeded[c.method+" "+c.route] = true
		}
		schema := fedtest.JSONSchema(r)
		if schema == nil {
			if body != "" {
				t.Errorf("%s: %d with a body %q, documented without one", name, res.StatusCode, body)
			}
			continue
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", name, ct)
		}
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Errorf("%s: not JSON: %s", name, body)
			continue
		}
		if err := doc.Check(schema, v); err != nil {
			t.Errorf("%s: %d %s\ndoes not match the documented schema: %v", name, res.StatusCode, body, err)
		}
	}
	for _, op := range doc.Operations() {
		if !succeeded[op] {
			t.Errorf("%s never answered with success in this test", op)
		}
	}
}

var secretRE = regexp.MustCompile(`"secret":"whsec_[A-Za-z0-9+/=]{44}"`)

// The secret is in the answer that creates a webhook, and in no other.
func TestSecretShownOnce(t *testing.T) {
	w := newWorld(t)
	_, created := w.do(t, "POST", "/api/v1/actors/alice/webhooks", w.h.Token, map[string]any{"url": "https://app.example/hook"}, "")
	if !secretRE.MatchString(created) {
		t.Fatalf("the new webhook's answer has no secret: %s", created)
	}
	for _, path := range []string{"/api/v1/actors/alice/webhooks", "/api/v1/actors/alice/webhooks/1"} {
		if _, body := w.do(t, "GET", path, w.h.Token, nil, ""); strings.Contains(body, "whsec_") {
			t.Errorf("GET %s shows the secret: %s", path, body)
		}
	}
}

// A webhook the operator paused says so, as documented.
func TestPausedWebhookSaysSo(t *testing.T) {
	w := newWorld(t)
	doc := openAPI(t)
	w.do(t, "POST", "/api/v1/actors/alice/webhooks", w.h.Token, map[string]any{"url": "https://app.example/hook"}, "")
	if err := w.h.DB.PauseWebhook(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	res, body := w.do(t, "GET", "/api/v1/actors/alice/webhooks/1", w.h.Token, nil, "")
	var v any
	json.Unmarshal([]byte(body), &v)
	r, _ := doc.Response("GET", "/api/v1/actors/{name}/webhooks/{id}", res.StatusCode)
	if res.StatusCode != 200 || !strings.Contains(body, `"paused_at":"`) {
		t.Errorf("paused webhook: %d %s", res.StatusCode, body)
	} else if err := doc.Check(fedtest.JSONSchema(r), v); err != nil {
		t.Errorf("%s does not match the schema: %v", body, err)
	}
}
