package nodeinfo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"herald/federation"
	"herald/nodeinfo"
)

// TestRead: the newest 2.x document the discovery document links on the
// same host names the software; one on another host, or none, is an error.
func TestRead(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"software": map[string]string{"name": "impostor", "version": "1"}})
	}))
	defer other.Close()
	var links []map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/nodeinfo":
			json.NewEncoder(w).Encode(map[string]any{"links": links})
		case "/nodeinfo/2.0":
			json.NewEncoder(w).Encode(map[string]any{"software": map[string]string{"name": "Mastodon", "version": "4.4.0"}})
		case "/nodeinfo/2.1":
			json.NewEncoder(w).Encode(map[string]any{"software": map[string]string{"name": "Mastodon", "version": "4.5.1"}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := federation.NewClient(federation.ClientOptions{AllowPrivate: true, AllowHTTP: true})
	rel := func(v string) string { return "http://nodeinfo.diaspora.software/ns/schema/" + v }
	links = []map[string]string{{"rel": rel("2.0"), "href": srv.URL + "/nodeinfo/2.0"}, {"rel": rel("2.1"), "href": srv.URL + "/nodeinfo/2.1"}}
	sw, err := nodeinfo.Read(context.Background(), c, srv.URL)
	if err != nil || sw != (nodeinfo.Software{Name: "mastodon", Version: "4.5.1"}) {
		t.Errorf("Read: %+v %v", sw, err)
	}
	links = []map[string]string{{"rel": rel("2.1"), "href": other.URL + "/nodeinfo/2.1"}}
	if sw, err := nodeinfo.Read(context.Background(), c, srv.URL); err == nil {
		t.Errorf("a document on another host was read: %+v", sw)
	}
	if sw, err := nodeinfo.Read(context.Background(), c, other.URL); err == nil {
		t.Errorf("a host without NodeInfo: %+v", sw)
	}
}
