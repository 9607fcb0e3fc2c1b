package followersync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/followersync"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// followAlice makes a remote actor follow alice through the inbox and
// delivers the Accept.
func followAlice(t *testing.T, h *fedtest.Herald, a *fedtest.RemoteActor) {
	t.Helper()
	if code, resp := h.Deliver(t, "/users/alice/inbox", a, fedtest.Activity(a, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("follow: %d %s", code, resp)
	}
	h.Step(t)
}

// publish posts a Note as alice (public: to her followers) and delivers it.
func publish(t *testing.T, h *fedtest.Herald, extra map[string]any) {
	t.Helper()
	note := map[string]any{"type": "Note", "content": "<p>hello</p>"}
	for k, v := range extra {
		note[k] = v
	}
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, note)
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %s", res.StatusCode, body)
	}
	h.Step(t)
}

// verifiedSync checks that a received POST was signed by alice with the
// Collection-Synchronization header covered, and returns the header.
func verifiedSync(t *testing.T, h *fedtest.Herald, rec fedtest.Received) followersync.Header {
	t.Helper()
	raw := rec.Header.Get(followersync.HeaderName)
	if raw == "" {
		t.Fatalf("%s %v to %s: no %s header", rec.Doc["type"], rec.Doc["id"], rec.Path, followersync.HeaderName)
	}
	signed, err := signature.Parse(rec.Request(), rec.Body, signature.Options{Now: h.Clock(), Scheme: "http"})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := federation.ParsePublicKeyPEM(h.Alice.PublicKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := signed.Verify(pub); err != nil {
		t.Fatalf("signature: %v", err)
	}
	if !signed.Covers("collection-synchronization") {
		t.Fatalf("header not covered: %v", signed.Components())
	}
	hdr, err := followersync.ParseHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	return hdr
}

func TestHeaderOnFollowersDeliveriesOnly(t *testing.T) {
	h := fedtest.NewHerald(t)
	r1 := fedtest.NewRemote(t, "127.0.8.1")
	r2 := fedtest.NewRemote(t, "127.0.8.2")
	bob, carol, dan := r1.Actor(t, "bob"), r1.Actor(t, "carol"), r2.Actor(t, "dan")
	for _, a := range []*fedtest.RemoteActor{bob, carol, dan} {
		followAlice(t, h, a)
	}
	// Accepts are not addressed to the followers: no header.
	for _, r := range []*fedtest.Remote{r1, r2} {
		for _, rec := range r.Received() {
			if rec.Header.Get(followersync.HeaderName) != "" {
				t.Errorf("%s carries %s", rec.Doc["type"], followersync.HeaderName)
			}
		}
	}
	publish(t, h, nil)
	want := map[*fedtest.Remote][]string{r1: {bob.ID, carol.ID}, r2: {dan.ID}}
	for r, ids := range want {
		got := r.Received()
		rec := got[len(got)-1]
		if rec.Doc["type"] != "Create" || rec.Path != "/inbox" {
			t.Fatalf("%s got %v at %s", r.Host, rec.Doc["type"], rec.Path)
		}
		hdr := verifiedSync(t, h, rec)
		if hdr.CollectionID != h.Inst.FollowersURL("alice") || hdr.URL != h.Inst.ActorID("alice")+"/followers_synchronization" {
			t.Errorf("header %+v", hdr)
		}
		if d := store.DigestOf(ids...).String(); hdr.Digest != d {
			t.Errorf("%s: digest %s, want %s (%v)", r.Host, hdr.Digest, d, ids)
		}
	}
	// After an Undo the next post's digest drops the follower.
	undo := fedtest.Activity(carol, "Undo", map[string]any{"type": "Follow", "actor": carol.ID, "object": h.Inst.ActorID("alice")})
	if code, _ := h.Deliver(t, "/inbox", carol, undo); code != 202 {
		t.Fatal(code)
	}
	publish(t, h, nil)
	got := r1.Received()
	if d := verifiedSync(t, h, got[len(got)-1]).Digest; d != store.DigestOf(bob.ID).String() {
		t.Errorf("digest after Undo %s", d)
	}

	// A post only to a mentioned actor, and a Follow, go without it.
	before := len(r1.Received())
	res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "hi", "to": []string{bob.ID}})
	if res.StatusCode != 201 {
		t.Fatalf("direct: %d %s", res.StatusCode, body)
	}
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Follow", "object": bob.ID}); res.StatusCode != 201 {
		t.Fatalf("follow: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	got = r1.Received()
	if len(got) != before+2 {
		t.Fatalf("received %d, want %d", len(got), before+2)
	}
	for _, rec := range got[before:] {
		if rec.Header.Get(followersync.HeaderName) != "" {
			t.Errorf("%s to %s carries the header", rec.Doc["type"], rec.Path)
		}
	}
}

func TestEndpointServesOnlyTheSignersFollowers(t *testing.T) {
	h := fedtest.NewHerald(t)
	r1 := fedtest.NewRemote(t, "127.0.8.1")
	r2 := fedtest.NewRemote(t, "127.0.8.2")
	bob, carol, dan := r1.Actor(t, "bob"), r1.Actor(t, "carol"), r2.Actor(t, "dan")
	for _, a := range []*fedtest.RemoteActor{carol, bob, dan} {
		followAlice(t, h, a)
	}
	url := h.URL + "/users/alice/followers_synchronization"
	get := func(req *http.Request) (int, map[string]any) {
		t.Helper()
		res, err := h.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var doc map[string]any
		json.NewDecoder(res.Body).Decode(&doc)
		return res.StatusCode, doc
	}
	// Unsigned.
	req, _ := http.NewRequest("GET", url, nil)
	if code, _ := get(req); code != 401 {
		t.Errorf("unsigned: %d", code)
	}
	// Signed, but the signature does not verify (dan's key id, bob's key).
	forged := *dan
	forged.Key = bob.Key
	if code, _ := get(fedtest.SignedGet(t, url, &forged, signature.Cavage, h.Clock())); code != 401 {
		t.Errorf("bad signature: %d", code)
	}
	// Signed by a server on a blocked domain.
	if _, err := h.DB.BlockDomain(context.Background(), "127.0.8.2", ""); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(fedtest.SignedGet(t, url, dan, signature.Cavage, h.Clock())); code != 401 {
		t.Errorf("blocked signer: %d", code)
	}
	h.DB.UnblockDomain(context.Background(), "127.0.8.2")
	followAlice(t, h, dan) // the block removed dan's follow
	// Each server sees its own followers, ordered, and nothing else.
	for _, c := range []struct {
		signer *fedtest.RemoteActor
		scheme signature.Scheme
		want   []string
	}{
		{bob, signature.Cavage, []string{bob.ID, carol.ID}},
		{carol, signature.RFC9421, []string{bob.ID, carol.ID}},
		{dan, signature.Cavage, []string{dan.ID}},
	} {
		code, doc := get(fedtest.SignedGet(t, url, c.signer, c.scheme, h.Clock()))
		if code != 200 || doc["id"] != url || doc["type"] != "OrderedCollection" {
			t.Fatalf("%s: %d %v", c.signer.ID, code, doc)
		}
		if got := fmt.Sprint(doc["orderedItems"]); got != fmt.Sprint(c.want) {
			t.Errorf("%s sees %s, want %v", c.signer.ID, got, c.want)
		}
	}
	// A server with no followers of alice gets an empty list.
	eve := fedtest.NewRemote(t, "127.0.8.3").Actor(t, "eve")
	if code, doc := get(fedtest.SignedGet(t, url, eve, signature.Cavage, h.Clock())); code != 200 || fmt.Sprint(doc["orderedItems"]) != "[]" {
		t.Errorf("eve: %d %v", code, doc)
	}
	if code, _ := get(fedtest.SignedGet(t, h.URL+"/users/nobody/followers_synchronization", bob, signature.Cavage, h.Clock())); code != 404 {
		t.Errorf("unknown actor: %d", code)
	}
}

// driftSetup: bob on a remote; local alice and zed follow him (accepted),
// local yan does not; the remote lists the ids in listed as its followers on
// Herald's origin.
func driftSetup(t *testing.T, listed []string) (*fedtest.Herald, *fedtest.Remote, *fedtest.RemoteActor) {
	t.Helper()
	h := fedtest.NewHerald(t)
	zed, _ := h.AddActor(t, "zed", false)
	h.AddActor(t, "yan", false)
	r := fedtest.NewRemote(t, "127.0.8.5")
	bob := r.Actor(t, "bob")
	ctx := context.Background()
	err := h.DB.Write(ctx, func(tx *store.Tx) error {
		for i, id := range []int64{h.Alice.ID, zed.ID} {
			f := store.Following{ActorID: id, Target: bob.ID, FollowID: fmt.Sprintf("%s/follows/%d", h.URL, i), State: store.StatePending}
			if err := tx.AddFollowing(ctx, f, h.Clock()); err != nil {
				return err
			}
			if _, err := tx.ResolveFollowing(ctx, f.FollowID, id, bob.ID, true); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Serve("/users/bob/followers_synchronization", as2(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams", "id": bob.ID + "/followers_synchronization",
		"type": "OrderedCollection", "orderedItems": listed,
	}))
	return h, r, bob
}

// deliverWithSync posts a followers-only Create from bob to the shared inbox
// with a Collection-Synchronization header; covered says whether the
// signature covers it.
func deliverWithSync(t *testing.T, h *fedtest.Herald, bob *fedtest.RemoteActor, hdr followersync.Header, covered bool) {
	t.Helper()
	act := fedtest.Activity(bob, "Create", map[string]any{"type": "Note", "content": "x", "attributedTo": bob.ID})
	act["to"] = []string{bob.ID + "/followers"}
	body, _ := json.Marshal(act)
	req, _ := http.NewRequest("POST", h.URL+"/inbox", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/activity+json")
	if covered {
		req.Header.Set(followersync.HeaderName, hdr.String())
	}
	if err := signature.Sign(req, body, signature.Key{ID: bob.KeyID(), Private: bob.Key}, signature.Cavage, h.Clock()); err != nil {
		t.Fatal(err)
	}
	if !covered {
		req.Header.Set(followersync.HeaderName, hdr.String())
	}
	if code, resp := h.Send(t, req, body); code != 202 {
		t.Fatalf("deliver: %d %s", code, resp)
	}
}

// as2 adds the ActivityStreams context, without which Herald reads no
// document.
func as2(doc map[string]any) map[string]any {
	doc["@context"] = "https://www.w3.org/ns/activitystreams"
	return doc
}

func syncCount(t *testing.T, h *fedtest.Herald, result string) string {
	t.Helper()
	for _, line := range strings.Split(h.Metrics(t), "\n") {
		if strings.HasPrefix(line, `federation_followers_sync_total{result="`+result+`"}`) {
			return strings.Fields(line)[1]
		}
	}
	return "missing"
}

func followers(t *testing.T, h *fedtest.Herald, bob *fedtest.RemoteActor) string {
	t.Helper()
	follows, err := h.DB.LocalFollowsOf(context.Background(), bob.ID) // by name
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range follows {
		if f.State == store.StateAccepted {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ",")
}

func TestDriftIsRepairedBothWays(t *testing.T) {
	// bob's server thinks alice and yan follow him; here alice and zed do.
	h, r, bob := driftSetup(t, nil)
	// wes asked to follow bob; bob's server lists him: the Accept was lost.
	wes, _ := h.AddActor(t, "wes", false)
	if err := h.DB.Write(context.Background(), func(tx *store.Tx) error {
		return tx.AddFollowing(context.Background(), store.Following{ActorID: wes.ID, Target: bob.ID, FollowID: h.URL + "/wes-follow", State: store.StatePending}, h.Clock())
	}); err != nil {
		t.Fatal(err)
	}
	listed := []string{h.Inst.ActorID("alice"), h.Inst.ActorID("yan"), h.Inst.ActorID("wes")}
	r.Serve("/users/bob/followers_synchronization", as2(map[string]any{
		"id": bob.ID + "/followers_synchronization", "type": "OrderedCollection", "orderedItems": listed,
	}))
	hdr := followersync.Header{CollectionID: bob.ID + "/followers", URL: bob.ID + "/followers_synchronization", Digest: store.DigestOf(listed...).String()}
	deliverWithSync(t, h, bob, hdr, true)
	if got := syncCount(t, h, "mismatch"); got != "1" {
		t.Fatalf("mismatch count %s", got)
	}
	// Nothing happened in the request.
	if followers(t, h, bob) != "alice,zed" || r.Requests.Load() == 0 {
		t.Fatalf("followers %s", followers(t, h, bob))
	}
	fetchesBefore := r.Requests.Load()
	if n := h.SyncStep(t); n != 1 {
		t.Fatalf("ran %d syncs", n)
	}
	if r.Requests.Load() == fetchesBefore {
		t.Error("the collection was not fetched")
	}
	if got := followers(t, h, bob); got != "alice,wes" {
		var res string
		if j, ok := storetest.First(t, h.DB.FollowersSyncs, func(store.FollowersSyncJob) bool { return true }); ok {
			res = j.Result
		}
		t.Errorf("followers after sync %q, want alice,wes (zed removed, wes accepted); job: %s", got, res)
	}
	h.Step(t)
	var undo *fedtest.Received
	for _, rec := range r.Received() {
		if rec.Doc["type"] == "Undo" {
			undo = &rec
		}
	}
	if undo == nil || undo.Path != "/users/bob/inbox" || undo.Doc["actor"] != h.Inst.ActorID("yan") || undo.KeyID != h.Inst.KeyID("yan") {
		t.Fatalf("Undo %+v", undo)
	}
	if obj, _ := undo.Doc["object"].(map[string]any); obj["type"] != "Follow" || obj["actor"] != h.Inst.ActorID("yan") || obj["object"] != bob.ID {
		t.Errorf("Undo object %v", undo.Doc["object"])
	}
	if got := syncCount(t, h, "reconciled"); got != "1" {
		t.Errorf("reconciled count %s", got)
	}
	// Another mismatch within the hour queues nothing.
	deliverWithSync(t, h, bob, hdr, true)
	if got := syncCount(t, h, "rate_limited"); got != "1" {
		t.Errorf("rate_limited count %s", got)
	}
	if n := h.SyncStep(t); n != 0 {
		t.Errorf("ran %d syncs within the hour", n)
	}
	// Once in sync, the header matches.
	h.Advance(2 * time.Hour)
	hdr.Digest = store.DigestOf(h.Inst.ActorID("alice"), h.Inst.ActorID("wes")).String()
	deliverWithSync(t, h, bob, hdr, true)
	if got := syncCount(t, h, "match"); got != "1" {
		t.Errorf("match count %s", got)
	}
}

func TestStaleOrTruncatedCollectionRemovesNothing(t *testing.T) {
	h, r, bob := driftSetup(t, nil)
	alice := h.Inst.ActorID("alice")
	// The collection lists alice only, but the header's digest was of
	// another set: stale, so zed keeps his follow.
	r.Serve("/users/bob/followers_synchronization", as2(map[string]any{"type": "OrderedCollection", "orderedItems": []string{alice}}))
	hdr := followersync.Header{CollectionID: bob.ID + "/followers", URL: bob.ID + "/followers_synchronization",
		Digest: store.DigestOf(alice, "http://elsewhere.example/users/x").String()}
	deliverWithSync(t, h, bob, hdr, true)
	h.SyncStep(t)
	if got := followers(t, h, bob); got != "alice,zed" {
		t.Errorf("stale collection: followers %q", got)
	}

	// Paged: the collection leads through referenced and embedded pages;
	// read to the end it removes zed.
	h.Advance(2 * time.Hour)
	r.Serve("/users/bob/sync/p1", as2(map[string]any{"type": "OrderedCollectionPage", "orderedItems": []string{}, "next": map[string]any{
		"type": "OrderedCollectionPage", "orderedItems": []string{alice}, "next": bob.ID + "/sync/p3"}}))
	r.Serve("/users/bob/sync/p3", as2(map[string]any{"type": "OrderedCollectionPage", "items": alice}))
	r.Serve("/users/bob/followers_synchronization", as2(map[string]any{"type": "OrderedCollection", "first": bob.ID + "/sync/p1"}))
	hdr.Digest = store.DigestOf(alice).String()
	deliverWithSync(t, h, bob, hdr, true)
	h.SyncStep(t)
	if got := followers(t, h, bob); got != "alice" {
		t.Errorf("paged collection: followers %q", got)
	}

	// Truncated: more than ten pages; nothing is removed.
	h2, r2, bob2 := driftSetup(t, nil)
	alice2 := h2.Inst.ActorID("alice")
	r2.Serve("/users/bob/followers_synchronization", as2(map[string]any{"type": "OrderedCollection", "first": bob2.ID + "/p/0"}))
	for i := 0; i < 12; i++ {
		r2.Serve(fmt.Sprintf("/users/bob/p/%d", i), as2(map[string]any{"type": "OrderedCollectionPage", "orderedItems": []string{alice2},
			"next": fmt.Sprintf("%s/p/%d", bob2.ID, i+1)}))
	}
	hdr2 := followersync.Header{CollectionID: bob2.ID + "/followers", URL: bob2.ID + "/followers_synchronization", Digest: store.DigestOf(alice2).String()}
	deliverWithSync(t, h2, bob2, hdr2, true)
	before := r2.Requests.Load()
	h2.SyncStep(t)
	if got := followers(t, h2, bob2); got != "alice,zed" {
		t.Errorf("truncated collection: followers %q", got)
	}
	if n := r2.Requests.Load() - before; n > followersync.MaxPages+1 {
		t.Errorf("%d requests for a truncated collection", n)
	}
}

func TestIgnoredHeaders(t *testing.T) {
	h, _, bob := driftSetup(t, []string{})
	other := fedtest.NewRemote(t, "127.0.8.6")
	good := followersync.Header{CollectionID: bob.ID + "/followers", URL: bob.ID + "/followers_synchronization", Digest: store.DigestOf().String()}
	seen := map[string]int{}
	for _, c := range []struct {
		hdr     followersync.Header
		covered bool
		result  string
	}{
		{good, false, "ignored_uncovered"},
		{followersync.Header{CollectionID: good.CollectionID, URL: other.URL + "/users/bob/followers_synchronization", Digest: good.Digest}, true, "ignored_foreign"},
		{followersync.Header{CollectionID: other.URL + "/users/bob/followers", URL: good.URL, Digest: good.Digest}, true, "ignored_foreign"},
		{followersync.Header{CollectionID: good.CollectionID, URL: strings.Replace(good.URL, "127.0.8.5", "127.0.8.5.evil", 1), Digest: good.Digest}, true, "ignored_foreign"},
	} {
		deliverWithSync(t, h, bob, c.hdr, c.covered)
		seen[c.result]++
		if got := syncCount(t, h, c.result); got != fmt.Sprint(seen[c.result]) {
			t.Errorf("%+v covered=%v: %s count %s", c.hdr, c.covered, c.result, got)
		}
		h.Advance(2 * time.Hour) // past the rate limit, had anything been queued
		if n := h.SyncStep(t); n != 0 {
			t.Errorf("%+v covered=%v: a sync ran", c.hdr, c.covered)
		}
	}
	if got := followers(t, h, bob); got != "alice,zed" {
		t.Errorf("followers %q", got)
	}
	if n := storetest.Count(t, h.DB.FollowersSyncs, nil); n != 0 {
		t.Errorf("jobs %d", n)
	}
}

// TestDisabledIgnoresHeaders: with the syncer disabled a mismatched header
// queues nothing and the endpoint is gone.
func TestDisabledIgnoresHeaders(t *testing.T) {
	h, _, bob := driftSetup(t, []string{})
	h.Srv.FollowersSync().Disabled = true
	deliverWithSync(t, h, bob, followersync.Header{CollectionID: bob.ID + "/followers", URL: bob.ID + "/followers_synchronization",
		Digest: store.DigestOf().String()}, true)
	if n := storetest.Count(t, h.DB.FollowersSyncs, nil); n != 0 {
		t.Errorf("jobs %d", n)
	}
	res, _ := h.Do(t, "GET", "/users/alice/followers_synchronization", "", nil)
	if res.StatusCode != 404 {
		t.Errorf("endpoint: %d", res.StatusCode)
	}
}
