package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestSuspendedActor: a suspended local actor's document is served with
// suspended: true and without its profile, as Mastodon serves one; its
// posts, collections and profile page answer 403; it cannot publish; a
// delivery queued before waits instead of going out; lifting the
// suspension serves everything again and the delivery goes.
func TestSuspendedActor(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.9.1")
	bob := r.Actor(t, "bob")
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatal("follow")
	}
	h.Step(t) // the Accept
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "before"})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	var act struct{ Object struct{ ID string } }
	json.Unmarshal([]byte(body), &act)
	status := strings.TrimPrefix(act.Object.ID, h.URL)

	if _, err := h.DB.SuspendActor(ctx, h.Alice.ID, "test"); err != nil {
		t.Fatal(err)
	}
	as := []string{"Accept", "application/activity+json"}
	res, body = h.Do(t, "GET", "/users/alice", "", nil, as...)
	var doc map[string]any
	json.Unmarshal([]byte(body), &doc)
	if res.StatusCode != 200 || doc["suspended"] != true || doc["summary"] != nil || doc["publicKey"] == nil || doc["inbox"] == nil {
		t.Errorf("suspended actor document: %d %s", res.StatusCode, body)
	}
	for _, p := range []string{status, "/users/alice/outbox", "/users/alice/followers", "/users/alice/collections/featured"} {
		if res, body := h.Do(t, "GET", p, "", nil, as...); res.StatusCode != 403 {
			t.Errorf("GET %s: %d %s, want 403", p, res.StatusCode, body)
		}
	}
	for _, p := range []string{"/@alice", "/users/alice", status} {
		if res, body := h.Do(t, "GET", p, "", nil, "Accept", "text/html"); res.StatusCode != 403 {
			t.Errorf("GET %s as a page: %d %s, want 403", p, res.StatusCode, body)
		}
	}
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "during"}); res.StatusCode != 403 {
		t.Errorf("publish while suspended: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	if n := len(received(r, "Create")); n != 0 {
		t.Errorf("a suspended actor's Create was delivered")
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, func(d store.DeliveryView) bool {
		return d.State == store.DeliveryQueued && strings.Contains(d.LastError, "suspended")
	}); n != 1 {
		t.Errorf("held deliveries: %d, want 1", n)
	}

	if err := h.DB.UnsuspendActor(ctx, h.Alice.ID); err != nil {
		t.Fatal(err)
	}
	if res, body := h.Do(t, "GET", status, "", nil, as...); res.StatusCode != 200 {
		t.Errorf("after unsuspend: GET %s: %d %s", status, res.StatusCode, body)
	}
	h.Advance(2 * time.Hour)
	h.Step(t)
	if n := len(received(r, "Create")); n != 1 {
		t.Errorf("after unsuspend: %d Creates delivered, want 1", n)
	}
}

// received lists the POSTs a remote got of activities of typ.
func received(r *fedtest.Remote, typ string) []fedtest.Received {
	var out []fedtest.Received
	for _, rec := range r.Received() {
		if rec.Doc["type"] == typ {
			out = append(out, rec)
		}
	}
	return out
}
