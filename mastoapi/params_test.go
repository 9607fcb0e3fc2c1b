package mastoapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParamsReadAlike: the same parameters sent as JSON, a form or the
// query read the same, lists and records included, and the body wins
// over the query.
func TestParamsReadAlike(t *testing.T) {
	requests := map[string]*http.Request{
		"json": jsonRequest(`{"a": "1", "flag": false, "ids": ["x", "y"], "home": {"last_read_id": "9"},
			"fields_attributes": [{"name": "n0", "value": "v0"}, {"name": "n1", "value": "v1"}]}`),
		"form": formRequest("a=1&flag=false&ids[]=x&ids[]=y&home[last_read_id]=9" +
			"&fields_attributes[0][name]=n0&fields_attributes[0][value]=v0&fields_attributes[1][name]=n1&fields_attributes[1][value]=v1"),
		"query": httptest.NewRequest("POST", "/?a=1&flag=0&ids[]=x&ids[]=y&home[last_read_id]=9"+
			"&fields_attributes[][name]=n0&fields_attributes[][value]=v0&fields_attributes[][name]=n1&fields_attributes[][value]=v1", nil),
	}
	for kind, r := range requests {
		p, err := readParams(r)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		flag, set := p.Bool("flag")
		recs := p.Records("fields_attributes")
		if p.Get("a") != "1" || flag || !set || !slices.Equal(p.List("ids"), []string{"x", "y"}) || p.Get("home[last_read_id]") != "9" ||
			len(recs) != 2 || recs[0]["name"] != "n0" || recs[1]["value"] != "v1" {
			t.Errorf("%s: a=%q flag=%v/%v ids=%v home=%q records=%v", kind, p.Get("a"), flag, set, p.List("ids"), p.Get("home[last_read_id]"), recs)
		}
	}
	r := httptest.NewRequest("POST", "/?a=query&b=query", strings.NewReader(`{"a": "body"}`))
	r.Header.Set("Content-Type", "application/json")
	p, _ := readParams(r)
	if p.Get("a") != "body" || p.Get("b") != "query" {
		t.Errorf("merge: a=%q b=%q", p.Get("a"), p.Get("b"))
	}
	for _, body := range []string{"", "   "} {
		if _, err := readParams(jsonRequest(body)); err != nil {
			t.Errorf("an empty JSON body: %v", err)
		}
	}
	for _, body := range []string{"{", "[1]"} {
		if _, err := readParams(jsonRequest(body)); err == nil {
			t.Errorf("the JSON body %q was taken", body)
		}
	}
}

func jsonRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	return r
}

func formRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

// TestScopeCoverage: parents cover children, follow its six, and nothing
// covers across trees.
func TestScopeCoverage(t *testing.T) {
	for _, c := range []struct {
		have, need string
		want       bool
	}{
		{"read", "read:statuses", true}, {"write", "write:media", true}, {"admin:read", "admin:read:accounts", true},
		{"follow", "write:follows", true}, {"follow", "read:mutes", true}, {"follow", "read:statuses", false},
		{"read", "write:statuses", false}, {"read", "admin:read", false}, {"write", "admin:write:reports", false},
		{"read:statuses", "read", false}, {"profile", "read:accounts", false}, {"push", "push", true},
	} {
		if got := Covers(c.have, c.need); got != c.want {
			t.Errorf("Covers(%s, %s) = %v", c.have, c.need, got)
		}
	}
	if _, ok := ParseScopes("read+write", nil); !ok {
		t.Error("pluses separate scopes in a query")
	}
	if _, ok := ParseScopes("read crypto", nil); ok {
		t.Error("a scope Mastodon dropped was taken")
	}
}

// TestTimesAndIDs: Mastodon's time layout, and Snowflakes that sort by
// the time they were made for.
func TestTimesAndIDs(t *testing.T) {
	at := mustTime("2024-05-01T12:34:56.789123Z")
	if got := Time(at); got != "2024-05-01T12:34:56.789Z" {
		t.Errorf("Time = %s", got)
	}
	a, b := NewID(at), NewID(at.Add(1e6))
	if a >= b || ID(a) == "" {
		t.Errorf("ids %d, %d do not sort by time", a, b)
	}
	if n, ok := ParseID(ID(a)); !ok || n != a {
		t.Errorf("ParseID(ID(%d)) = %d, %v", a, n, ok)
	}
	if _, ok := ParseID("12abc"); ok {
		t.Error("ParseID took a malformed id")
	}
}

func mustTime(s string) (t time.Time) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}
