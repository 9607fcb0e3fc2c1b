package server_test

import (
	"context"
	"errors"
	"testing"

	"herald/federation"
	"herald/federation/as"
	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/outbox"
	"herald/policy"
	"herald/store"
)

// follow makes a follow alice and checks that the inbox answered 202.
func follow(t *testing.T, h *fedtest.Herald, a *fedtest.RemoteActor) {
	t.Helper()
	if code, body := h.Deliver(t, "/users/alice/inbox", a, fedtest.Activity(a, "Follow", h.Inst.ActorID("alice"))); code != 202 || body != "" {
		t.Fatalf("follow from %s: %d %q", a.ID, code, body)
	}
}

// post publishes a public Note as alice.
func post(t *testing.T, h *fedtest.Herald, text string) *outbox.Result {
	t.Helper()
	res, err := h.Node.Publisher.Publish(context.Background(), h.Alice, &as.Object{Type: as.Types{"Note"}, Content: text}, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// refusedEverywhere checks what Herald (with authorized fetch on) does
// with a refused remote: its signed Follow is answered 202 and leaves
// nothing behind, its signed GET gets what an unknown actor's outbox gets,
// its actor is not fetched nor looked up, and the remote hears nothing
// from Herald.
func refusedEverywhere(t *testing.T, h *fedtest.Herald, r *fedtest.Remote, a *fedtest.RemoteActor) {
	t.Helper()
	ctx := context.Background()
	seen := r.Requests.Load()
	followers := storetest.Count(t, h.DB.AllFollowers, nil)
	processed := storetest.Count(t, h.DB.ProcessedIDs, nil)
	follow(t, h, a)
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != followers {
		t.Errorf("a refused Follow was recorded: %d followers, was %d", n, followers)
	}
	if n := storetest.Count(t, h.DB.ProcessedIDs, nil); n != processed {
		t.Error("a refused activity was marked seen")
	}
	if code, body, _ := get(t, h, "/users/alice/outbox", a, signature.Cavage, ""); code != 404 || body != `{"error":"no such actor"}`+"\n" {
		t.Errorf("signed GET by a refused server: %d %q", code, body)
	}
	if _, err := h.Node.Fetcher.Actor(ctx, a.ID); !errors.Is(err, federation.ErrBlocked) {
		t.Errorf("fetch of %s: %v, want ErrBlocked", a.ID, err)
	}
	if _, err := h.Node.Publisher.Lookup(ctx, a.Name+"@"+r.Host); !errors.Is(err, federation.ErrBlocked) {
		t.Errorf("WebFinger of %s: %v, want ErrBlocked", r.Host, err)
	}
	if n := r.Requests.Load(); n != seen {
		t.Errorf("the refused server was contacted %d times", n-seen)
	}
}

// TestBlockCoversSubdomains: after `block blocked.test`, a server on
// social.blocked.test is dropped at the inbox, never fetched, and skipped
// at enqueue and at delivery; notblocked.test, whose name only ends the
// same way, is served as before.
func TestBlockCoversSubdomains(t *testing.T) {
	ctx := context.Background()
	h := newSecureHerald(t)
	sub := fedtest.NewNamedRemote(t, "127.0.2.1", "social.blocked.test")
	bob := sub.Actor(t, "bob")
	near := fedtest.NewNamedRemote(t, "127.0.2.2", "notblocked.test")
	carol := near.Actor(t, "carol")
	follow(t, h, bob)
	follow(t, h, carol)
	if res := post(t, h, "before"); res.Queued.Queued != 2 {
		t.Fatalf("queued %+v, want both servers", res.Queued)
	}

	removed, err := h.DB.BlockDomain(ctx, "blocked.test", "")
	if err != nil || removed != 1 {
		t.Fatalf("block removed %d %v, want bob's follow", removed, err)
	}
	// What was queued before the block (the Accept and the post) is
	// skipped, not sent.
	h.Step(t)
	if got := len(sub.Received()); got != 0 {
		t.Errorf("the blocked subdomain received %d POSTs", got)
	}
	if got := len(near.Received()); got != 2 {
		t.Errorf("notblocked.test received %d POSTs, want the Accept and the post", got)
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, func(d store.DeliveryView) bool {
		return d.Host == sub.Host && d.State == store.DeliveryFailed && d.LastError == "skipped: domain blocked (blocked.test)"
	}); n != 2 {
		t.Errorf("%d skipped deliveries to %s saying which block, want 2", n, sub.Host)
	}
	refusedEverywhere(t, h, sub, bob)

	// Enqueue: alice's departure goes to every server she reached, the
	// blocked one left out when it is queued.
	res, err := h.Node.Publisher.DeleteActor(ctx, h.Alice, outbox.Options{})
	if err != nil || res.Queued.Queued != 1 || res.Queued.SkippedBlocked != 1 {
		t.Fatalf("Delete queued %+v %v, want notblocked.test queued and the subdomain skipped", res, err)
	}
}

// TestAllowlistMode: in allowlist mode only a subdomain of an allowed
// domain is federated with; another server, even one that followed before
// the switch, is refused at the inbox and at fetch, and what is addressed
// to it is held (not failed: the operator may allow it) without contacting
// it.
func TestAllowlistMode(t *testing.T) {
	ctx := context.Background()
	h := newSecureHerald(t)
	friends := fedtest.NewNamedRemote(t, "127.0.2.3", "social.friends.test")
	carol := friends.Actor(t, "carol")
	strangers := fedtest.NewNamedRemote(t, "127.0.2.4", "strangers.test")
	dave := strangers.Actor(t, "dave")
	follow(t, h, dave)

	if _, err := h.DB.AllowDomain(ctx, "friends.test", ""); err != nil {
		t.Fatal(err)
	}
	if err := h.DB.SetFederationMode(ctx, policy.ModeAllowlist); err != nil {
		t.Fatal(err)
	}
	follow(t, h, carol)
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { host, _ := store.HostOf(f.Follower); return host == "social.friends.test" }); n != 1 {
		t.Fatalf("carol's follow: %d rows", n)
	}
	refusedEverywhere(t, h, strangers, dave)
	if code, _, _ := get(t, h, "/users/alice/outbox", carol, signature.RFC9421, ""); code != 200 {
		t.Errorf("signed GET by an allowed server: %d", code)
	}

	seen := strangers.Requests.Load()
	if res := post(t, h, "friends only"); res.Queued.Queued != 2 || res.Queued.SkippedBlocked != 0 {
		t.Fatalf("queued %+v, want both queued (dave's to be held)", res.Queued)
	}
	h.Step(t)
	if got := len(friends.Received()); got != 2 { // the Accept and the post
		t.Errorf("the allowed server received %d POSTs, want 2", got)
	}
	if n := strangers.Requests.Load(); n != seen {
		t.Errorf("a server off the allowlist was contacted %d times", n-seen)
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, func(d store.DeliveryView) bool {
		return d.Host == strangers.Host && d.State == store.DeliveryQueued && d.Attempts == 0 && d.LastError == "held: not on the allowlist (allowlist mode)"
	}); n == 0 {
		t.Errorf("no delivery to the server off the allowlist held, saying why")
	}
}
