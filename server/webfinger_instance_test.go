package server_test

import (
	"encoding/json"
	"net/url"
	"testing"
)

// TestWebFingerInstanceActor (FEP-d556): the server's URL (with or without
// the trailing slash), acct:host@host and the actor's URL all find the
// instance actor, linked as self and as a Service; rel= keeps only the
// links asked for.
func TestWebFingerInstanceActor(t *testing.T) {
	ts := newTestServer(t)
	actor := ts.URL + "/actor"
	type jrd struct {
		Subject string
		Aliases []string
		Links   []struct{ Rel, Type, Href string }
	}
	get := func(query string) jrd {
		t.Helper()
		res, body := ts.get(t, "/.well-known/webfinger?"+query, "")
		if res.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", query, res.StatusCode, body)
		}
		var j jrd
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	for _, res := range []string{ts.URL + "/", ts.URL, "acct:" + ts.inst.Host() + "@" + ts.inst.Domain, actor} {
		j := get("resource=" + url.QueryEscape(res))
		if j.Subject != "acct:"+ts.inst.Host()+"@"+ts.inst.Domain {
			t.Errorf("%s: subject %q", res, j.Subject)
		}
		rels := map[string]string{}
		for _, l := range j.Links {
			rels[l.Rel] = l.Href
		}
		if rels["self"] != actor || rels["https://www.w3.org/ns/activitystreams#Service"] != actor {
			t.Errorf("%s: links %+v, want self and Service to %s", res, j.Links, actor)
		}
	}
	j := get("resource=" + url.QueryEscape(ts.URL+"/") + "&rel=" + url.QueryEscape("https://www.w3.org/ns/activitystreams#Service"))
	if len(j.Links) != 1 || j.Links[0].Href != actor {
		t.Errorf("rel=Service: links %+v", j.Links)
	}
	for _, bad := range []string{ts.URL + "/?q=1", ts.URL + "/about"} {
		if res, body := ts.get(t, "/.well-known/webfinger?resource="+url.QueryEscape(bad), ""); res.StatusCode != 404 {
			t.Errorf("%s: status %d %s, want 404", bad, res.StatusCode, body)
		}
	}
}
