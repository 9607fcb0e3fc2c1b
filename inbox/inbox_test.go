package inbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

func TestFollowIsRecordedAndAccepted(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	for _, scheme := range []signature.Scheme{signature.Cavage, signature.RFC9421} {
		t.Run(string(scheme), func(t *testing.T) {
			follow := fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))
			body, _ := json.Marshal(follow)
			code, resp := h.Send(t, fedtest.SignedPost(t, h.URL+"/users/alice/inbox", body, bob, scheme, h.Clock()), body)
			if code != http.StatusAccepted || resp != "" {
				t.Fatalf("status %d %q", code, resp)
			}
			if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool {
				return f.Follower == bob.ID && f.State == store.StateAccepted && f.Inbox == bob.Inbox() && f.FollowID == follow["id"]
			}); n != 1 {
				t.Fatalf("follower rows %d", n)
			}
			var accept string
			for _, d := range storetest.Deliveries(t, h.DB) {
				if d.Inbox == bob.Inbox() && d.Activity.Type == "Accept" && strings.Contains(d.Activity.Body, follow["id"].(string)) {
					accept = d.Activity.Body
					break
				}
			}
			if accept == "" {
				t.Fatal("no Accept delivery")
			}
			var doc struct {
				Actor  string
				Object struct{ ID, Type, Actor, Object string }
			}
			json.Unmarshal([]byte(accept), &doc)
			if doc.Actor != h.Inst.ActorID("alice") || doc.Object.ID != follow["id"] || doc.Object.Type != "Follow" ||
				doc.Object.Actor != bob.ID || doc.Object.Object != h.Inst.ActorID("alice") {
				t.Errorf("Accept %s", accept)
			}
		})
	}
	// A repeated Follow (new id) is answered with another Accept and keeps
	// one follower row.
	h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.Follower == bob.ID }); n != 1 {
		t.Errorf("follower rows %d", n)
	}
	if n := storetest.Count(t, h.DB.AllActivities, func(a store.Activity) bool { return a.Type == "Accept" }); n != 3 {
		t.Errorf("Accepts %d, want 3", n)
	}
}

func TestManualApprovalLeavesFollowPending(t *testing.T) {
	h := fedtest.NewHerald(t)
	h.AddActor(t, "carol", true)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	if code, _ := h.Deliver(t, "/users/carol/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("carol"))); code != 202 {
		t.Fatalf("status %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.Follower == bob.ID && f.State == store.StatePending }); n != 1 {
		t.Errorf("pending rows %d", n)
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, nil); n != 0 {
		t.Errorf("a delivery was queued before approval: %d", n)
	}
}

func TestReplayAndDuplicates(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	follow := fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))
	body, _ := json.Marshal(follow)
	req := fedtest.SignedPost(t, h.URL+"/users/alice/inbox", body, bob, signature.Cavage, h.Clock())
	headers := req.Header.Clone()
	if code, _ := h.Send(t, req, body); code != 202 {
		t.Fatalf("first: %d", code)
	}
	// The same bytes and headers again: a replay.
	replay, _ := http.NewRequest("POST", h.URL+"/users/alice/inbox", nil)
	replay.Header = headers
	if code, resp := h.Send(t, replay, body); code != 202 || resp != "" {
		t.Fatalf("replay: %d %q", code, resp)
	}
	// The same activity signed afresh a minute later: a redelivery.
	h.Advance(time.Minute)
	if code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/users/alice/inbox", body, bob, signature.RFC9421, h.Clock()), body); code != 202 {
		t.Fatalf("re-signed: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, nil); n != 1 {
		t.Errorf("deliveries %d, want 1", n)
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="duplicate"} 2`) {
		t.Error("duplicates not counted")
	}
}

func TestConcurrentIdenticalDeliveries(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	note := fedtest.Activity(bob, "Create", map[string]any{"id": bob.ID + "/notes/1", "type": "Note", "content": "hi"})
	note["to"] = []string{h.Inst.ActorID("alice")}
	body, _ := json.Marshal(note)
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = h.Send(t, fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock()), body)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 202 {
			t.Errorf("request %d: %d", i, c)
		}
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 1 {
		t.Errorf("inbox items %d, want 1", n)
	}
	if n := storetest.Count(t, h.DB.ProcessedIDs, nil); n != 1 {
		t.Errorf("processed %d", n)
	}
}

func TestBlockedDomainIsNeverContacted(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.3")
	bob := r.Actor(t, "bob")
	if _, err := h.DB.BlockDomain(context.Background(), "127.0.1.3", "spam"); err != nil {
		t.Fatal(err)
	}
	follow := fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))
	if code, resp := h.Deliver(t, "/users/alice/inbox", bob, follow); code != 202 || resp != "" {
		t.Fatalf("blocked: %d %q", code, resp)
	}
	// A stale signature from a blocked domain gets what anyone's would
	// (TestNoBlockOracle): the verdict is not revealed.
	body, _ := json.Marshal(follow)
	if code, _ := h.Send(t, fedtest.SignedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.Clock().Add(-3*time.Hour)), body); code != 401 {
		t.Fatalf("blocked and stale: %d", code)
	}
	if n := r.Requests.Load(); n != 0 {
		t.Errorf("the blocked server was contacted %d times", n)
	}
	for what, n := range map[string]int{
		"followers":            storetest.Count(t, h.DB.AllFollowers, nil),
		"processed activities": storetest.Count(t, h.DB.ProcessedIDs, nil),
		"inbox items":          storetest.Count(t, h.DB.AllInboxItems, nil),
		"deliveries":           storetest.Count(t, h.DB.AllDeliveries, nil),
		"remote actors":        storetest.Count(t, h.DB.AllRemoteActors, nil),
	} {
		if n != 0 {
			t.Errorf("%d %s stored", n, what)
		}
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="blocked"} 1`) {
		t.Error("blocked drops not counted")
	}
}

func TestBlockRemovesFollows(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.4")
	bob := r.Actor(t, "bob")
	h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 1 {
		t.Fatalf("followers %d", n)
	}
	removed, err := h.DB.BlockDomain(context.Background(), "127.0.1.4", "")
	if err != nil || removed != 1 {
		t.Fatalf("removed %d %v", removed, err)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 0 {
		t.Errorf("followers %d after block", n)
	}
}

func TestRefusedRequests(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	eve := r.Actor(t, "eve")
	note := func() map[string]any {
		a := fedtest.Activity(bob, "Create", map[string]any{"type": "Note", "content": "hi"})
		a["to"] = h.Inst.ActorID("alice")
		return a
	}
	url := h.URL + "/users/alice/inbox"
	post := func(body []byte, mutate func(*http.Request)) int {
		req := fedtest.SignedPost(t, url, body, bob, signature.Cavage, h.Clock())
		if mutate != nil {
			mutate(req)
		}
		code, _ := h.Send(t, req, body)
		return code
	}
	good, _ := json.Marshal(note())
	cases := []struct {
		name   string
		body   []byte
		mutate func(*http.Request)
		code   int
	}{
		{"too large", []byte(`{"type":"Create","actor":"x","pad":"` + strings.Repeat("a", 1<<20) + `"}`), nil, 413},
		{"wrong content type", good, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415},
		{"not JSON", []byte("hello"), nil, 400},
		{"not an object", []byte(`["Create"]`), nil, 400},
		{"no type", []byte(`{"actor":"` + bob.ID + `"}`), nil, 400},
		{"no signature", good, func(r *http.Request) { r.Header.Del("Signature") }, 401},
		{"malformed signature", good, func(r *http.Request) { r.Header.Set("Signature", `keyId="x",signature=`) }, 400},
		{"stale date", good, func(r *http.Request) {
			old := fedtest.SignedPost(t, url, good, bob, signature.Cavage, h.Clock().Add(-2*time.Hour))
			r.Header = old.Header
		}, 401},
	}
	for _, c := range cases {
		if code := post(c.body, c.mutate); code != c.code {
			t.Errorf("%s: %d, want %d", c.name, code, c.code)
		}
	}
	// A body changed after signing: the digest no longer matches.
	req := fedtest.SignedPost(t, url, good, bob, signature.Cavage, h.Clock())
	tampered := []byte(strings.Replace(string(good), `"hi"`, `"ho"`, 1))
	if code, _ := h.Send(t, req, tampered); code != 401 {
		t.Errorf("tampered body: %d", code)
	}
	// A digest recomputed for the changed body: the signature fails.
	req = fedtest.SignedPost(t, url, good, bob, signature.Cavage, h.Clock())
	forged := fedtest.SignedPost(t, url, tampered, bob, signature.Cavage, h.Clock())
	req.Header.Set("Digest", forged.Header.Get("Digest"))
	if code, _ := h.Send(t, req, tampered); code != 401 {
		t.Errorf("forged digest: %d", code)
	}
	// Each refusal is logged with the peer's address, the keyId and the
	// reason, so one misbehaving peer can be traced.
	logs := h.Logs()
	for _, want := range []string{
		`msg="inbox: refused" remote=127.0.0.1:`,
		`key_id=` + bob.KeyID() + ` reason=digest_mismatch status=401`,
		`key_id=` + bob.KeyID() + ` reason=bad_signature status=401`,
		`key_id="" reason=no_signature status=401`,
		`reason=date_window`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if refs := h.Srv.Inbox().Metrics.RecentRefusals(); len(refs) != 5 || refs[0].Reason != "bad_signature" || refs[0].KeyID != bob.KeyID() {
		t.Errorf("recent refusals: %+v", refs)
	}
	// Signed by eve, claiming to be bob: dropped, not stored.
	body, _ := json.Marshal(note())
	if code, _ := h.Send(t, fedtest.SignedPost(t, url, body, eve, signature.Cavage, h.Clock()), body); code != 202 {
		t.Errorf("wrong actor: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 0 {
		t.Errorf("%d items stored from refused requests", n)
	}
	if n := storetest.Count(t, h.DB.ProcessedIDs, nil); n != 0 {
		t.Errorf("%d activities marked processed", n)
	}
	m := h.Metrics(t)
	if !strings.Contains(m, `federation_inbox_dropped_total{reason="actor_mismatch"} 1`) {
		t.Error("actor mismatch not counted")
	}
	// Unknown personal inbox.
	if code, _ := h.Deliver(t, "/users/nobody/inbox", bob, note()); code != 404 {
		t.Errorf("unknown inbox: %d", code)
	}
	// And the good one still works.
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, note()); code != 202 || storetest.Count(t, h.DB.AllInboxItems, nil) != 1 {
		t.Errorf("good request: %d", code)
	}
}

func TestKeyRotation(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("first: %d", code)
	}
	// bob gets a new key; Herald still has the old one cached.
	bob2 := r.Actor(t, "bob")
	before := r.Requests.Load()
	note := fedtest.Activity(bob2, "Create", map[string]any{"type": "Note", "content": "new key"})
	note["to"] = h.Inst.ActorID("alice")
	if code, resp := h.Deliver(t, "/users/alice/inbox", bob2, note); code != 202 {
		t.Fatalf("after rotation: %d %s", code, resp)
	}
	if r.Requests.Load() == before {
		t.Error("the key was not refetched")
	}
	// A signature by the old key now fails, even after a refresh.
	old := fedtest.Activity(bob, "Create", map[string]any{"type": "Note", "content": "old key"})
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, old); code != 401 {
		t.Errorf("old key: %d", code)
	}
}

func TestUndoFollowWithoutID(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	// Mastodon's followers synchronization: an Undo of a Follow with no id.
	undo := fedtest.Activity(bob, "Undo", map[string]any{"type": "Follow", "actor": bob.ID, "object": h.Inst.ActorID("alice")})
	if code, _ := h.Deliver(t, "/inbox", bob, undo); code != 202 {
		t.Fatalf("undo: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 0 {
		t.Errorf("followers %d after Undo", n)
	}
}

func TestUndoFollowByID(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	follow := fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))
	h.Deliver(t, "/users/alice/inbox", bob, follow)
	h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Undo", follow["id"]))
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 0 {
		t.Errorf("followers %d after Undo", n)
	}
}

func TestAcceptWithEmbeddedFollow(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	followID := h.Inst.ActorID("alice") + "/follows/1"
	err := h.DB.Write(context.Background(), func(tx *store.Tx) error {
		return tx.AddFollowing(context.Background(), store.Following{ActorID: h.Alice.ID, Target: bob.ID, FollowID: followID, State: store.StatePending}, h.Clock())
	})
	if err != nil {
		t.Fatal(err)
	}
	// Fedify embeds the whole Follow in its Accept.
	accept := fedtest.Activity(bob, "Accept", map[string]any{"id": followID, "type": "Follow", "actor": h.Inst.ActorID("alice"), "object": bob.ID})
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, accept); code != 202 {
		t.Fatalf("accept: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowing, func(g store.Following) bool { return g.State == store.StateAccepted }); n != 1 {
		t.Errorf("accepted following rows %d", n)
	}
	// Reject referencing the Follow only by id removes it.
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Reject", followID)); code != 202 {
		t.Fatalf("reject: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowing, nil); n != 0 {
		t.Errorf("following rows %d after Reject", n)
	}
}

func TestDeletes(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	// A self-Delete from an actor Herald never saw: 202, nothing fetched.
	ghost := r.Actor(t, "ghost")
	if code, _ := h.Deliver(t, "/inbox", ghost, fedtest.Activity(ghost, "Delete", ghost.ID)); code != 202 {
		t.Fatalf("unknown delete: %d", code)
	}
	if n := r.Requests.Load(); n != 0 {
		t.Errorf("fetched %d times for an unknown actor's Delete", n)
	}
	// A known actor's post, then its deletion.
	h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	note := fedtest.Activity(bob, "Create", map[string]any{"id": bob.ID + "/notes/9", "type": "Note"})
	note["to"] = h.Inst.ActorID("alice")
	h.Deliver(t, "/users/alice/inbox", bob, note)
	del := fedtest.Activity(bob, "Delete", bob.ID+"/notes/9")
	del["to"] = h.Inst.ActorID("alice")
	h.Deliver(t, "/users/alice/inbox", bob, del)
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Object == bob.ID+"/notes/9" && i.Deleted }); n != 1 {
		t.Errorf("deleted items %d", n)
	}
	// An Update of the actor drops its cache entry; its Delete must still
	// be applied (it is known through its follow).
	h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Update", bob.Document()))
	// The actor deletes itself: follows and cache go.
	if code, _ := h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Delete", bob.ID)); code != 202 {
		t.Fatalf("actor delete: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, nil) + storetest.Found(h.DB.RemoteActorByID(context.Background(), bob.ID)); n != 0 {
		t.Errorf("%d rows left after the actor's Delete", n)
	}
}

func TestInboxRecordsLiveness(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	if at, err := h.DB.LastInbound(context.Background(), r.Host); err != nil || !at.Equal(h.Clock().Truncate(time.Second)) {
		t.Errorf("host's last inbound request at %v (%v), want %v", at, err, h.Clock())
	}
}

// TestNormalisationWaitsForTheSignature: JSON-LD normalisation is costly,
// so an unsigned body is refused as unsigned before any of it: one that
// would fail to normalise (an unknown context) gets 401, not 400. Signed,
// the same body is read as plain AS2.
func TestNormalisationWaitsForTheSignature(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	act := fedtest.Activity(bob, "Create", map[string]any{"type": "Note", "as:content": "hi"})
	act["@context"] = []any{"https://www.w3.org/ns/activitystreams", "https://unknown.example/ctx"}
	act["to"] = h.Inst.ActorID("alice")
	body, _ := json.Marshal(act)
	req, _ := http.NewRequest("POST", h.URL+"/users/alice/inbox", nil)
	req.Header.Set("Content-Type", "application/activity+json")
	if code, resp := h.Send(t, req, body); code != 401 {
		t.Errorf("unsigned: %d %s, want 401", code, resp)
	}
	if code, resp := h.Deliver(t, "/users/alice/inbox", bob, act); code != 202 {
		t.Errorf("signed: %d %s, want 202", code, resp)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 1 {
		t.Errorf("items %d", n)
	}
}
