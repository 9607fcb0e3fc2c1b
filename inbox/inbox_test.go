package inbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/store"
)

func TestFollowIsRecordedAndAccepted(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	for _, scheme := range []signature.Scheme{signature.Cavage, signature.RFC9421} {
		t.Run(string(scheme), func(t *testing.T) {
			follow := activity(bob, "Follow", h.inst.ActorID("alice"))
			body, _ := json.Marshal(follow)
			code, resp := h.send(t, signedPost(t, h.URL+"/users/alice/inbox", body, bob, scheme, h.clock()), body)
			if code != http.StatusAccepted || resp != "" {
				t.Fatalf("status %d %q", code, resp)
			}
			if n := h.count(t, `SELECT count(*) FROM followers WHERE follower = ? AND state = 'accepted' AND inbox = ? AND follow_id = ?`,
				bob.id, bob.inbox(), follow["id"]); n != 1 {
				t.Fatalf("follower rows %d", n)
			}
			var accept string
			err := h.db.Reader().QueryRow(`SELECT a.body FROM deliveries d JOIN activities a ON a.id = d.activity_id
				WHERE d.inbox = ? AND a.type = 'Accept' AND a.body LIKE ?`, bob.inbox(), "%"+follow["id"].(string)+"%").Scan(&accept)
			if err != nil {
				t.Fatalf("no Accept delivery: %v", err)
			}
			var doc struct {
				Actor  string
				Object struct{ ID, Type, Actor, Object string }
			}
			json.Unmarshal([]byte(accept), &doc)
			if doc.Actor != h.inst.ActorID("alice") || doc.Object.ID != follow["id"] || doc.Object.Type != "Follow" ||
				doc.Object.Actor != bob.id || doc.Object.Object != h.inst.ActorID("alice") {
				t.Errorf("Accept %s", accept)
			}
		})
	}
	// A repeated Follow (new id) is answered with another Accept and keeps
	// one follower row.
	h.deliver(t, "/inbox", bob, activity(bob, "Follow", h.inst.ActorID("alice")))
	if n := h.count(t, `SELECT count(*) FROM followers WHERE follower = ?`, bob.id); n != 1 {
		t.Errorf("follower rows %d", n)
	}
	if n := h.count(t, `SELECT count(*) FROM activities WHERE type = 'Accept'`); n != 3 {
		t.Errorf("Accepts %d, want 3", n)
	}
}

func TestManualApprovalLeavesFollowPending(t *testing.T) {
	h := newHerald(t)
	h.addActor(t, "carol", true)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	if code, _ := h.deliver(t, "/users/carol/inbox", bob, activity(bob, "Follow", h.inst.ActorID("carol"))); code != 202 {
		t.Fatalf("status %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM followers WHERE follower = ? AND state = 'pending'`, bob.id); n != 1 {
		t.Errorf("pending rows %d", n)
	}
	if n := h.count(t, `SELECT count(*) FROM deliveries`); n != 0 {
		t.Errorf("a delivery was queued before approval: %d", n)
	}
}

func TestReplayAndDuplicates(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	follow := activity(bob, "Follow", h.inst.ActorID("alice"))
	body, _ := json.Marshal(follow)
	req := signedPost(t, h.URL+"/users/alice/inbox", body, bob, signature.Cavage, h.clock())
	headers := req.Header.Clone()
	if code, _ := h.send(t, req, body); code != 202 {
		t.Fatalf("first: %d", code)
	}
	// The same bytes and headers again: a replay.
	replay, _ := http.NewRequest("POST", h.URL+"/users/alice/inbox", nil)
	replay.Header = headers
	if code, resp := h.send(t, replay, body); code != 202 || resp != "" {
		t.Fatalf("replay: %d %q", code, resp)
	}
	// The same activity signed afresh a minute later: a redelivery.
	h.advance(time.Minute)
	if code, _ := h.send(t, signedPost(t, h.URL+"/users/alice/inbox", body, bob, signature.RFC9421, h.clock()), body); code != 202 {
		t.Fatalf("re-signed: %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM deliveries`); n != 1 {
		t.Errorf("deliveries %d, want 1", n)
	}
	if !strings.Contains(h.metrics(t), `federation_inbox_dropped_total{reason="duplicate"} 2`) {
		t.Error("duplicates not counted")
	}
}

func TestConcurrentIdenticalDeliveries(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	note := activity(bob, "Create", map[string]any{"id": bob.id + "/notes/1", "type": "Note", "content": "hi"})
	note["to"] = []string{h.inst.ActorID("alice")}
	body, _ := json.Marshal(note)
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = h.send(t, signedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.clock()), body)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 202 {
			t.Errorf("request %d: %d", i, c)
		}
	}
	if n := h.count(t, `SELECT count(*) FROM inbox_items`); n != 1 {
		t.Errorf("inbox items %d, want 1", n)
	}
	if n := h.count(t, `SELECT count(*) FROM processed_activities`); n != 1 {
		t.Errorf("processed %d", n)
	}
}

func TestBlockedDomainIsNeverContacted(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.3")
	bob := r.actor(t, "bob")
	if _, err := h.db.BlockDomain(context.Background(), "127.0.1.3", "spam"); err != nil {
		t.Fatal(err)
	}
	follow := activity(bob, "Follow", h.inst.ActorID("alice"))
	if code, resp := h.deliver(t, "/users/alice/inbox", bob, follow); code != 202 || resp != "" {
		t.Fatalf("blocked: %d %q", code, resp)
	}
	// A stale signature from a blocked domain gets the same answer: the
	// verdict is not revealed.
	body, _ := json.Marshal(follow)
	if code, _ := h.send(t, signedPost(t, h.URL+"/inbox", body, bob, signature.Cavage, h.clock().Add(-3*time.Hour)), body); code != 202 {
		t.Fatalf("blocked and stale: %d", code)
	}
	if n := r.requests.Load(); n != 0 {
		t.Errorf("the blocked server was contacted %d times", n)
	}
	for _, table := range []string{"followers", "processed_activities", "inbox_items", "deliveries", "remote_actors"} {
		if n := h.count(t, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%s has %d rows", table, n)
		}
	}
	if !strings.Contains(h.metrics(t), `federation_inbox_dropped_total{reason="blocked"} 2`) {
		t.Error("blocked drops not counted")
	}
}

func TestBlockRemovesFollows(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.4")
	bob := r.actor(t, "bob")
	h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Follow", h.inst.ActorID("alice")))
	if n := h.count(t, `SELECT count(*) FROM followers`); n != 1 {
		t.Fatalf("followers %d", n)
	}
	removed, err := h.db.BlockDomain(context.Background(), "127.0.1.4", "")
	if err != nil || removed != 1 {
		t.Fatalf("removed %d %v", removed, err)
	}
	if n := h.count(t, `SELECT count(*) FROM followers`); n != 0 {
		t.Errorf("followers %d after block", n)
	}
}

func TestRefusedRequests(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	eve := r.actor(t, "eve")
	note := func() map[string]any {
		a := activity(bob, "Create", map[string]any{"type": "Note", "content": "hi"})
		a["to"] = h.inst.ActorID("alice")
		return a
	}
	url := h.URL + "/users/alice/inbox"
	post := func(body []byte, mutate func(*http.Request)) int {
		req := signedPost(t, url, body, bob, signature.Cavage, h.clock())
		if mutate != nil {
			mutate(req)
		}
		code, _ := h.send(t, req, body)
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
		{"no type", []byte(`{"actor":"` + bob.id + `"}`), nil, 400},
		{"no signature", good, func(r *http.Request) { r.Header.Del("Signature") }, 401},
		{"malformed signature", good, func(r *http.Request) { r.Header.Set("Signature", `keyId="x",signature=`) }, 400},
		{"stale date", good, func(r *http.Request) {
			old := signedPost(t, url, good, bob, signature.Cavage, h.clock().Add(-2*time.Hour))
			r.Header = old.Header
		}, 401},
	}
	for _, c := range cases {
		if code := post(c.body, c.mutate); code != c.code {
			t.Errorf("%s: %d, want %d", c.name, code, c.code)
		}
	}
	// A body changed after signing: the digest no longer matches.
	req := signedPost(t, url, good, bob, signature.Cavage, h.clock())
	tampered := []byte(strings.Replace(string(good), `"hi"`, `"ho"`, 1))
	if code, _ := h.send(t, req, tampered); code != 401 {
		t.Errorf("tampered body: %d", code)
	}
	// A digest recomputed for the changed body: the signature fails.
	req = signedPost(t, url, good, bob, signature.Cavage, h.clock())
	forged := signedPost(t, url, tampered, bob, signature.Cavage, h.clock())
	req.Header.Set("Digest", forged.Header.Get("Digest"))
	if code, _ := h.send(t, req, tampered); code != 401 {
		t.Errorf("forged digest: %d", code)
	}
	// Signed by eve, claiming to be bob: dropped, not stored.
	body, _ := json.Marshal(note())
	if code, _ := h.send(t, signedPost(t, url, body, eve, signature.Cavage, h.clock()), body); code != 202 {
		t.Errorf("wrong actor: %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM inbox_items`); n != 0 {
		t.Errorf("%d items stored from refused requests", n)
	}
	if n := h.count(t, `SELECT count(*) FROM processed_activities`); n != 0 {
		t.Errorf("%d activities marked processed", n)
	}
	m := h.metrics(t)
	if !strings.Contains(m, `federation_inbox_dropped_total{reason="actor_mismatch"} 1`) {
		t.Error("actor mismatch not counted")
	}
	// Unknown personal inbox.
	if code, _ := h.deliver(t, "/users/nobody/inbox", bob, note()); code != 404 {
		t.Errorf("unknown inbox: %d", code)
	}
	// And the good one still works.
	if code, _ := h.deliver(t, "/users/alice/inbox", bob, note()); code != 202 || h.count(t, `SELECT count(*) FROM inbox_items`) != 1 {
		t.Errorf("good request: %d", code)
	}
}

func TestKeyRotation(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	if code, _ := h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Follow", h.inst.ActorID("alice"))); code != 202 {
		t.Fatalf("first: %d", code)
	}
	// bob gets a new key; Herald still has the old one cached.
	bob2 := r.actor(t, "bob")
	before := r.requests.Load()
	note := activity(bob2, "Create", map[string]any{"type": "Note", "content": "new key"})
	note["to"] = h.inst.ActorID("alice")
	if code, resp := h.deliver(t, "/users/alice/inbox", bob2, note); code != 202 {
		t.Fatalf("after rotation: %d %s", code, resp)
	}
	if r.requests.Load() == before {
		t.Error("the key was not refetched")
	}
	// A signature by the old key now fails, even after a refresh.
	old := activity(bob, "Create", map[string]any{"type": "Note", "content": "old key"})
	if code, _ := h.deliver(t, "/users/alice/inbox", bob, old); code != 401 {
		t.Errorf("old key: %d", code)
	}
}

func TestUndoFollowWithoutID(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Follow", h.inst.ActorID("alice")))
	// Mastodon's followers synchronization: an Undo of a Follow with no id.
	undo := activity(bob, "Undo", map[string]any{"type": "Follow", "actor": bob.id, "object": h.inst.ActorID("alice")})
	if code, _ := h.deliver(t, "/inbox", bob, undo); code != 202 {
		t.Fatalf("undo: %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM followers`); n != 0 {
		t.Errorf("followers %d after Undo", n)
	}
}

func TestUndoFollowByID(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	follow := activity(bob, "Follow", h.inst.ActorID("alice"))
	h.deliver(t, "/users/alice/inbox", bob, follow)
	h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Undo", follow["id"]))
	if n := h.count(t, `SELECT count(*) FROM followers`); n != 0 {
		t.Errorf("followers %d after Undo", n)
	}
}

func TestAcceptWithEmbeddedFollow(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	followID := h.inst.ActorID("alice") + "/follows/1"
	err := h.db.Write(context.Background(), func(tx *sql.Tx) error {
		return store.AddFollowing(context.Background(), tx, store.Following{ActorID: h.alice.ID, Target: bob.id, FollowID: followID, State: store.StatePending}, h.clock())
	})
	if err != nil {
		t.Fatal(err)
	}
	// Fedify embeds the whole Follow in its Accept.
	accept := activity(bob, "Accept", map[string]any{"id": followID, "type": "Follow", "actor": h.inst.ActorID("alice"), "object": bob.id})
	if code, _ := h.deliver(t, "/users/alice/inbox", bob, accept); code != 202 {
		t.Fatalf("accept: %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM following WHERE state = 'accepted'`); n != 1 {
		t.Errorf("accepted following rows %d", n)
	}
	// Reject referencing the Follow only by id removes it.
	if code, _ := h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Reject", followID)); code != 202 {
		t.Fatalf("reject: %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM following`); n != 0 {
		t.Errorf("following rows %d after Reject", n)
	}
}

func TestDeletes(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	// A self-Delete from an actor Herald never saw: 202, nothing fetched.
	ghost := r.actor(t, "ghost")
	if code, _ := h.deliver(t, "/inbox", ghost, activity(ghost, "Delete", ghost.id)); code != 202 {
		t.Fatalf("unknown delete: %d", code)
	}
	if n := r.requests.Load(); n != 0 {
		t.Errorf("fetched %d times for an unknown actor's Delete", n)
	}
	// A known actor's post, then its deletion.
	h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Follow", h.inst.ActorID("alice")))
	note := activity(bob, "Create", map[string]any{"id": bob.id + "/notes/9", "type": "Note"})
	note["to"] = h.inst.ActorID("alice")
	h.deliver(t, "/users/alice/inbox", bob, note)
	del := activity(bob, "Delete", bob.id+"/notes/9")
	del["to"] = h.inst.ActorID("alice")
	h.deliver(t, "/users/alice/inbox", bob, del)
	if n := h.count(t, `SELECT count(*) FROM inbox_items WHERE object = ? AND deleted_at IS NOT NULL`, bob.id+"/notes/9"); n != 1 {
		t.Errorf("deleted items %d", n)
	}
	// An Update of the actor drops its cache entry; its Delete must still
	// be applied (it is known through its follow).
	h.deliver(t, "/inbox", bob, activity(bob, "Update", bob.document()))
	// The actor deletes itself: follows and cache go.
	if code, _ := h.deliver(t, "/inbox", bob, activity(bob, "Delete", bob.id)); code != 202 {
		t.Fatalf("actor delete: %d", code)
	}
	if n := h.count(t, `SELECT count(*) FROM followers`) + h.count(t, `SELECT count(*) FROM remote_actors WHERE id = ?`, bob.id); n != 0 {
		t.Errorf("%d rows left after the actor's Delete", n)
	}
}

func TestInboxRecordsLiveness(t *testing.T) {
	h := newHerald(t)
	r := newRemote(t, "127.0.1.1")
	bob := r.actor(t, "bob")
	h.deliver(t, "/users/alice/inbox", bob, activity(bob, "Follow", h.inst.ActorID("alice")))
	if n := h.count(t, `SELECT count(*) FROM hosts WHERE host = ? AND last_inbound_at = ?`, r.host, h.clock().Unix()); n != 1 {
		t.Errorf("host liveness rows %d", n)
	}
}

func (h *herald) metrics(t testing.TB) string {
	t.Helper()
	res, err := h.client.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
