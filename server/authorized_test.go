package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/inbox"
	"herald/internal/fedtest"
	"herald/node"
	"herald/server"
	"herald/store"
)

// newSecureHerald starts a Herald with authorized fetch on.
func newSecureHerald(t *testing.T) *fedtest.Herald {
	t.Helper()
	return fedtest.NewHeraldWith(t, func(_ *node.Config, c *server.Config) { c.AuthorizedFetch = true })
}

// get makes a GET of path on Herald, signed by a (unsigned when a is nil)
// with scheme, asking for ActivityStreams unless accept says otherwise.
func get(t *testing.T, h *fedtest.Herald, path string, a *fedtest.RemoteActor, scheme signature.Scheme, accept string) (int, string, http.Header) {
	t.Helper()
	var req *http.Request
	if a != nil {
		req = fedtest.SignedGet(t, h.URL+path, a, scheme, h.Clock())
	} else {
		req, _ = http.NewRequest(http.MethodGet, h.URL+path, nil)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	} else if a == nil {
		req.Header.Set("Accept", "application/activity+json")
	}
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// TestAuthorizedFetch: with authorized fetch on, objects, activities and
// collections are served to signed GETs (either scheme) only; unsigned or
// badly signed ones get 401 and nothing of them; the actor document is
// served unsigned in Mastodon's minimal form; a signer on a blocked domain
// gets, byte for byte, what an unknown id gets, and its server is never
// contacted; web pages stay public.
func TestAuthorizedFetch(t *testing.T) {
	ctx := context.Background()
	h := newSecureHerald(t)
	good := fedtest.NewRemote(t, "127.0.2.5")
	gina := good.Actor(t, "gina")
	bad := fedtest.NewNamedRemote(t, "127.0.2.6", "x.blocked-af.test")
	eve := bad.Actor(t, "eve")
	if _, err := h.DB.BlockDomain(ctx, "blocked-af.test", ""); err != nil {
		t.Fatal(err)
	}
	res := post(t, h, "a secret only servers may read")
	act, obj := res.Activity.IRI, res.Activity.ObjectIRI
	path := func(iri string) string { return strings.TrimPrefix(iri, h.URL) }
	// gina's reply, approved (as the preapproval of a follower is): its
	// approval is served to the servers Herald federates with only, as
	// GoToSocial serves one (processing/fedi, validateIntReqRequest).
	o, err := h.DB.ObjectByIRI(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	approval := &store.InteractionRequest{ObjectID: o.ID, Kind: "canReply", Interaction: gina.ID + "/statuses/1", Actor: gina.ID,
		Body: "{}", State: store.InteractionAccepted, CreatedAt: h.Clock()}
	if _, err := h.DB.AddInteractionRequest(ctx, approval); err != nil {
		t.Fatal(err)
	}
	// Each document, and the path of one like it that does not exist.
	docs := []struct{ path, unknown string }{
		{path(obj), "/users/alice/statuses/nothing"},
		{fmt.Sprintf("/users/alice/approvals/%d", approval.ID), "/users/alice/approvals/999999"},
		{path(obj) + "/likes", "/users/alice/statuses/nothing/likes"},
		{path(act), "/users/alice/activities/nothing"},
		{"/users/alice/outbox", "/users/nobody/outbox"},
		{"/users/alice/outbox?page=true", "/users/nobody/outbox?page=true"},
		{"/users/alice/followers?page=1", "/users/nobody/followers?page=1"},
		{"/users/alice/following", "/users/nobody/following"},
		{"/users/alice/collections/featured", "/users/nobody/collections/featured"},
	}
	forged := &fedtest.RemoteActor{ID: gina.ID, Name: gina.Name, Key: eve.Key} // gina's keyId, another key
	for _, d := range docs {
		for _, scheme := range []signature.Scheme{signature.Cavage, signature.RFC9421} {
			if code, body, hdr := get(t, h, d.path, gina, scheme, ""); code != 200 || hdr.Get("Cache-Control") != "private" {
				t.Errorf("%s signed (%v): %d %q %q", d.path, scheme, code, hdr.Get("Cache-Control"), body)
			}
		}
		for who, a := range map[string]*fedtest.RemoteActor{"unsigned": nil, "forged": forged} {
			code, body, _ := get(t, h, d.path, a, signature.Cavage, "")
			if code != 401 || strings.Contains(body, "secret") || strings.Contains(body, "activities") {
				t.Errorf("%s %s: %d %q, want 401 and nothing of the document", d.path, who, code, body)
			}
		}
		code, body, _ := get(t, h, d.path, eve, signature.Cavage, "")
		wantCode, wantBody, _ := get(t, h, d.unknown, gina, signature.Cavage, "")
		if code != 404 || code != wantCode || body != wantBody {
			t.Errorf("%s by a blocked signer: %d %q; an unknown id: %d %q", d.path, code, body, wantCode, wantBody)
		}
	}

	// The actor: minimal unsigned (and when the signature fails), whole
	// when signed, unknown to a blocked signer.
	keys := func(body string) string {
		var doc map[string]any
		json.Unmarshal([]byte(body), &doc)
		var out []string
		for k := range doc {
			out = append(out, k)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	const minimal = "@context assertionMethod endpoints id inbox preferredUsername publicKey type"
	for who, a := range map[string]*fedtest.RemoteActor{"unsigned": nil, "forged": forged} {
		if code, body, _ := get(t, h, "/users/alice", a, signature.Cavage, ""); code != 200 || keys(body) != minimal {
			t.Errorf("actor %s: %d, keys %q, want %q", who, code, keys(body), minimal)
		}
	}
	if code, body, _ := get(t, h, "/users/alice", gina, signature.RFC9421, ""); code != 200 || !strings.Contains(keys(body), "outbox") || !strings.Contains(keys(body), "followers") {
		t.Errorf("actor signed: %d, keys %q", code, keys(body))
	}
	code, body, _ := get(t, h, "/users/alice", eve, signature.Cavage, "")
	wantCode, wantBody, _ := get(t, h, "/users/nobody", gina, signature.Cavage, "")
	if code != 404 || code != wantCode || body != wantBody {
		t.Errorf("actor by a blocked signer: %d %q; an unknown actor: %d %q", code, body, wantCode, wantBody)
	}
	// A stale signature is told what it is whether or not its host is
	// blocked (no oracle of the block): 401 for both.
	for who, a := range map[string]*fedtest.RemoteActor{"accepted": gina, "blocked": eve} {
		req := fedtest.SignedGet(t, h.URL+path(obj), a, signature.Cavage, h.Clock().Add(-3*time.Hour))
		res, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 {
			t.Errorf("a stale signature, %s host: %d, want 401", who, res.StatusCode)
		}
	}
	if n := bad.Requests.Load(); n != 0 {
		t.Errorf("the blocked signer's server was contacted %d times", n)
	}
	// The instance actor signs Herald's fetches: anyone may read it.
	if code, body, _ := get(t, h, "/actor", nil, signature.Cavage, ""); code != 200 || !strings.Contains(body, "publicKeyPem") {
		t.Errorf("instance actor unsigned: %d", code)
	}
	// Web pages are for people, as Mastodon serves them.
	if code, body, _ := get(t, h, path(obj), nil, signature.Cavage, "text/html"); code != 200 || !strings.Contains(body, "<html") {
		t.Errorf("object page: %d", code)
	}
	if m := h.Metrics(t); !strings.Contains(m, `federation_signed_get_total{result="refused"}`) || !strings.Contains(m, `federation_signed_get_total{result="verified"}`) {
		t.Error("signed GETs not counted")
	}
}

// TestSignedGetKeyFetchesAreBounded: signed GETs whose keys must be
// fetched share the inbox's fetch permits: while a key host stalls, it
// has at most its share of fetches in flight and the next GET is answered
// 503 with Retry-After at once (the actor document: its minimal form).
func TestSignedGetKeyFetchesAreBounded(t *testing.T) {
	h := newSecureHerald(t)
	slow := fedtest.NewRemote(t, "127.0.2.7")
	var actors []*fedtest.RemoteActor
	for i := range inbox.DefaultHostFetches + 1 {
		actors = append(actors, slow.Actor(t, fmt.Sprint("s", i)))
	}
	release := slow.Stall()
	defer release()
	codes := make(chan int, inbox.DefaultHostFetches)
	for _, a := range actors[:inbox.DefaultHostFetches] {
		go func() {
			req := fedtest.SignedGet(t, h.URL+"/users/alice/outbox", a, signature.Cavage, h.Clock())
			res, err := h.Client.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			res.Body.Close()
			codes <- res.StatusCode
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); slow.Stalled.Load() < inbox.DefaultHostFetches; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d key fetches reached the slow host, want %d", slow.Stalled.Load(), inbox.DefaultHostFetches)
		}
	}
	code, _, hdr := get(t, h, "/users/alice/outbox", actors[inbox.DefaultHostFetches], signature.Cavage, "")
	if code != 503 || hdr.Get("Retry-After") == "" {
		t.Errorf("a GET beyond the host's key fetches: %d, Retry-After %q", code, hdr.Get("Retry-After"))
	}
	// The actor document is served, minimal, rather than refused: its
	// reader may be checking one of Herald's signatures.
	if code, body, _ := get(t, h, "/users/alice", actors[inbox.DefaultHostFetches], signature.Cavage, ""); code != 200 || strings.Contains(body, "outbox") {
		t.Errorf("the actor beyond the host's key fetches: %d %q, want the minimal document", code, body)
	}
	if n := slow.Stalled.Load(); n != inbox.DefaultHostFetches {
		t.Errorf("%d key fetches in flight, want %d", n, inbox.DefaultHostFetches)
	}
	release()
	for range inbox.DefaultHostFetches {
		if c := <-codes; c != 200 {
			t.Errorf("a GET whose key came: %d", c)
		}
	}
}
