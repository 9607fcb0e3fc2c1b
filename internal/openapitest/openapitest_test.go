package openapitest

import (
	"net/http"
	"strings"
	"testing"
)

// TestHeraldSchemaLoads: Herald's description loads and validates as
// OpenAPI 3.1, and its checks bite: an Account without its required
// attributes, a time without Mastodon's format and a relative URL fail,
// a status the operation does not list fails, a path it has not is not
// described.
func TestHeraldSchemaLoads(t *testing.T) {
	v := Load(t, HeraldSchema(), "http://127.0.0.1:1")
	if v.Doc().OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", v.Doc().OpenAPI)
	}
	json := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	account := `{"id":"1","username":"a","acct":"a","url":"http://h.example/@a","uri":"http://h.example/users/a","display_name":"","note":"",
		"avatar":"http://h.example/a.png","avatar_static":"http://h.example/a.png","header":"http://h.example/h.png","header_static":"http://h.example/h.png",
		"locked":false,"fields":[],"emojis":[],"bot":false,"group":false,"discoverable":true,"created_at":"2024-01-02T00:00:00.000Z",
		"last_status_at":null,"statuses_count":0,"followers_count":0,"following_count":0}`
	for _, tc := range []struct {
		name   string
		e      Exchange
		want   bool
		absent bool
	}{
		{name: "an account", e: Exchange{Method: "GET", Path: "/api/v1/accounts/1", Status: 200, Header: json, Body: []byte(account)}, want: true},
		{name: "no username", e: Exchange{Method: "GET", Path: "/api/v1/accounts/1", Status: 200, Header: json,
			Body: []byte(`{"id":"1"}`)}},
		{name: "a time without milliseconds' dot", e: Exchange{Method: "GET", Path: "/api/v1/accounts/1", Status: 200, Header: json,
			Body: []byte(replace(account, `"2024-01-02T00:00:00.000Z"`, `"2024-01-02 00:00:00"`))}},
		{name: "a relative avatar", e: Exchange{Method: "GET", Path: "/api/v1/accounts/1", Status: 200, Header: json,
			Body: []byte(replace(account, `"avatar":"http://h.example/a.png"`, `"avatar":"/a.png"`))}},
		{name: "an unlisted status", e: Exchange{Method: "GET", Path: "/api/v1/accounts/1", Status: 418, Header: json, Body: []byte(`{"error":"x"}`)}},
		{name: "an error", e: Exchange{Method: "GET", Path: "/api/v1/accounts/1", Status: 404, Header: json, Body: []byte(`{"error":"Record not found"}`)}, want: true},
		{name: "a status where none is served yet", e: Exchange{Method: "GET", Path: "/api/v1/timelines/home", Status: 200, Header: json, Body: []byte(`[{"id":"1"}]`)}},
		{name: "elsewhere", e: Exchange{Method: "GET", Path: "/nowhere", Status: 200}, absent: true},
	} {
		err := v.Validate(tc.e)
		switch {
		case tc.absent:
			if err != ErrNotDescribed {
				t.Errorf("%s: %v, want not described", tc.name, err)
			}
		case tc.want && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.want && err == nil:
			t.Errorf("%s: validated", tc.name)
		}
	}
}

func replace(s, old, new string) string { return strings.Replace(s, old, new, 1) }
