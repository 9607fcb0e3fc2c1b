package mastoapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/mastoapi"
)

// api calls the client API and decodes a 200 answer into out (nil: none).
func api(t *testing.T, h *fedtest.Herald, token, method, path string, params map[string]any, out any) {
	t.Helper()
	kind := ""
	if params != nil {
		kind = "json"
	}
	res, body := do(t, h, call{method: method, path: path, token: token, kind: kind, params: params})
	decode(t, res, body, 200, out)
}

// status calls an endpoint that answers a Status.
func status(t *testing.T, h *fedtest.Herald, token, method, path string, params map[string]any) mastoapi.Status {
	t.Helper()
	var st mastoapi.Status
	api(t, h, token, method, path, params, &st)
	return st
}

// statuses calls an endpoint that answers statuses.
func statuses(t *testing.T, h *fedtest.Herald, token, path string) []mastoapi.Status {
	t.Helper()
	var list []mastoapi.Status
	api(t, h, token, "GET", path, nil, &list)
	return list
}

// world is a Herald with alice logged in and a remote server with bob,
// whom alice follows (accepted) and who follows alice.
type world struct {
	h        *fedtest.Herald
	r        *fedtest.Remote
	tok      string
	bob      *fedtest.RemoteActor
	bobID    string
	aliceIRI string
}

// newWorld builds the world; ip is the remote's loopback address.
func newWorld(t *testing.T, ip string) *world {
	t.Helper()
	h := newHerald(t)
	w := &world{h: h, r: fedtest.NewRemote(t, ip), tok: logIn(t, h, "read write follow push"), aliceIRI: h.Inst.ActorID("alice")}
	w.bob, w.bobID = remoteAccount(t, h, w.r, "bob", w.tok)
	api(t, h, w.tok, "POST", "/api/v1/accounts/"+w.bobID+"/follow", map[string]any{}, nil)
	h.Step(t)
	follow := w.lastSent(t, "Follow")
	w.deliver(t, "Accept", follow["id"])
	w.deliver(t, "Follow", w.aliceIRI)
	h.Step(t) // the Accept of bob's Follow
	return w
}

// deliver sends alice's inbox an activity of bob's and returns it.
func (w *world) deliver(t *testing.T, typ string, object any, fields ...any) map[string]any {
	t.Helper()
	return w.deliverAs(t, w.bob, typ, object, fields...)
}

// deliverAs is deliver for another remote actor; fields are key, value
// pairs added to the activity.
func (w *world) deliverAs(t *testing.T, who *fedtest.RemoteActor, typ string, object any, fields ...any) map[string]any {
	t.Helper()
	act := fedtest.Activity(who, typ, object)
	act["to"] = []string{"https://www.w3.org/ns/activitystreams#Public"}
	act["cc"] = []string{w.aliceIRI, who.ID + "/followers"}
	for i := 0; i+1 < len(fields); i += 2 {
		act[fields[i].(string)] = fields[i+1]
	}
	if code, body := w.h.Deliver(t, "/users/alice/inbox", who, act); code != 202 {
		t.Fatalf("deliver %s: %d %s", typ, code, body)
	}
	return act
}

// note is a public Note of who's (id under /notes/) with fields added,
// served by its server.
func (w *world) note(who *fedtest.RemoteActor, id, content string, fields ...any) map[string]any {
	n := map[string]any{"id": who.ID + "/notes/" + id, "type": "Note", "attributedTo": who.ID, "content": content,
		"to": []string{"https://www.w3.org/ns/activitystreams#Public"}, "cc": []string{who.ID + "/followers"},
		"published": "2024-05-01T12:00:00Z"}
	for i := 0; i+1 < len(fields); i += 2 {
		n[fields[i].(string)] = fields[i+1]
	}
	// Its server serves it, as the outbox fetches what a reply answers.
	served := map[string]any{"@context": "https://www.w3.org/ns/activitystreams"}
	for k, v := range n {
		served[k] = v
	}
	w.r.Serve(strings.TrimPrefix(n["id"].(string), w.r.URL), served)
	return n
}

// lastSent is the latest activity of typ bob's server received.
func (w *world) lastSent(t *testing.T, typ string) map[string]any {
	t.Helper()
	got := w.r.Received()
	for i := len(got) - 1; i >= 0; i-- {
		if got[i].Doc["type"] == typ {
			return got[i].Doc
		}
	}
	t.Fatalf("bob's server received no %s: %v", typ, types(got))
	return nil
}

// sentUndoOf says whether bob's server received an Undo of an activity of
// the inner type.
func (w *world) sentUndoOf(t *testing.T, inner string) bool {
	t.Helper()
	for _, r := range w.r.Received() {
		if o, ok := r.Doc["object"].(map[string]any); ok && r.Doc["type"] == "Undo" && o["type"] == inner {
			return true
		}
	}
	return false
}

func types(list []fedtest.Received) []string {
	var out []string
	for _, r := range list {
		out = append(out, fmt.Sprint(r.Doc["type"]))
	}
	return out
}

// find is the status of iri (uri) in a list, or fails.
func find(t *testing.T, list []mastoapi.Status, uri string) mastoapi.Status {
	t.Helper()
	for _, s := range list {
		if s.URI == uri || (s.Reblog != nil && s.Reblog.URI == uri) {
			return s
		}
	}
	t.Fatalf("no %s among %d statuses", uri, len(list))
	return mastoapi.Status{}
}

// object is the object an activity carries, as a map.
func object(t *testing.T, act map[string]any) map[string]any {
	t.Helper()
	o, ok := act["object"].(map[string]any)
	if !ok {
		b, _ := json.Marshal(act)
		t.Fatalf("no embedded object: %s", b)
	}
	return o
}

func has(list any, s string) bool {
	b, _ := json.Marshal(list)
	return strings.Contains(string(b), s)
}
