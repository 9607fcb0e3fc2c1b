package outbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/outbox"
	"herald/store"
)

// follow makes remote actor a follow alice through Herald's inbox and
// delivers the Accept.
func follow(t *testing.T, h *fedtest.Herald, a *fedtest.RemoteActor) {
	t.Helper()
	if code, resp := h.Deliver(t, "/users/alice/inbox", a, fedtest.Activity(a, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("follow: %d %s", code, resp)
	}
	h.Step(t)
}

// received counts the POSTs a remote got of activities of typ, by path.
func received(r *fedtest.Remote, typ string) map[string]int {
	out := map[string]int{}
	for _, rec := range r.Received() {
		if rec.Doc["type"] == typ {
			out[rec.Path]++
		}
	}
	return out
}

func post(t *testing.T, h *fedtest.Herald, token string, body any, headers ...string) (*http.Response, map[string]any) {
	t.Helper()
	res, b := h.Do(t, "POST", "/users/alice/outbox", token, body, headers...)
	var doc map[string]any
	json.Unmarshal([]byte(b), &doc)
	if res.StatusCode == 201 && res.Header.Get("Location") != doc["id"] {
		t.Errorf("Location %q, activity id %v", res.Header.Get("Location"), doc["id"])
	}
	return res, doc
}

// nested is a value n maps deep.
func nested(n int) any {
	var v any = "bottom"
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

func TestPublishDeliversOncePerSharedInbox(t *testing.T) {
	h := fedtest.NewHerald(t)
	r1 := fedtest.NewRemote(t, "127.0.7.1")
	r2 := fedtest.NewRemote(t, "127.0.7.2")
	for _, a := range []*fedtest.RemoteActor{r1.Actor(t, "bob"), r1.Actor(t, "carol"), r2.Actor(t, "dan")} {
		follow(t, h, a)
	}
	res, act := post(t, h, h.Token, map[string]any{"type": "Note", "content": "<p>Hello, fediverse</p>"})
	if res.StatusCode != 201 {
		t.Fatalf("publish: %d %v", res.StatusCode, act)
	}
	obj, _ := act["object"].(map[string]any)
	if act["type"] != "Create" || act["actor"] != h.Inst.ActorID("alice") || obj["attributedTo"] != h.Inst.ActorID("alice") ||
		!strings.HasPrefix(obj["id"].(string), h.Inst.ActorID("alice")+"/statuses/") || obj["published"] == nil {
		t.Fatalf("activity %v", act)
	}
	if fmt.Sprint(act["to"]) != "[https://www.w3.org/ns/activitystreams#Public]" || fmt.Sprint(act["cc"]) != "["+h.Inst.FollowersURL("alice")+"]" {
		t.Errorf("default addressing to %v cc %v", act["to"], act["cc"])
	}
	h.Step(t)
	for _, r := range []*fedtest.Remote{r1, r2} {
		if got := received(r, "Create"); len(got) != 1 || got["/inbox"] != 1 {
			t.Errorf("%s got Creates %v, want one to /inbox", r.Host, got)
		}
	}
	// The object and the activity are served at their ids.
	for _, id := range []string{obj["id"].(string), act["id"].(string)} {
		res, body := h.Do(t, "GET", strings.TrimPrefix(id, h.URL), "", nil)
		if res.StatusCode != 200 || !strings.Contains(body, "Hello, fediverse") {
			t.Errorf("GET %s: %d %s", id, res.StatusCode, body)
		}
	}
	// Browsers get a page with the text and no markup from the post.
	res2, page := h.Do(t, "GET", strings.TrimPrefix(obj["id"].(string), h.URL), "", nil, "Accept", "text/html")
	if res2.StatusCode != 200 || !strings.Contains(page, "<p>Hello, fediverse</p>") || strings.Contains(page, "&lt;p&gt;") {
		t.Errorf("object page %d:\n%s", res2.StatusCode, page)
	}
	// The outbox lists it.
	_, coll := h.Do(t, "GET", "/users/alice/outbox", "", nil)
	if !strings.Contains(coll, `"totalItems":1`) {
		t.Errorf("outbox %s", coll)
	}
	_, page1 := h.Do(t, "GET", "/users/alice/outbox?page=true", "", nil)
	if !strings.Contains(page1, act["id"].(string)) {
		t.Errorf("outbox page %s", page1)
	}
	// The delivery report says where it went, matching what the farm got.
	id := act["id"].(string)
	res, rep := h.Do(t, "GET", "/users/alice/outbox/"+id[strings.LastIndex(id, "/")+1:]+"/deliveries", h.Token, nil)
	if res.StatusCode != 200 {
		t.Fatalf("report %d %s", res.StatusCode, rep)
	}
	var report struct {
		Summary string
		Targets []struct{ Inbox, State string }
	}
	json.Unmarshal([]byte(rep), &report)
	if report.Summary != "delivered to 2 of 2 servers" || len(report.Targets) != 2 {
		t.Errorf("report %s", rep)
	}
	for _, tg := range report.Targets {
		if tg.State != "delivered" || !fedtest.HasPrefix(tg.Inbox, r1.SharedInbox(), r2.SharedInbox()) {
			t.Errorf("target %+v", tg)
		}
	}
	// NodeInfo counts the post.
	if _, ni := h.Do(t, "GET", "/nodeinfo/2.1", "", nil); !strings.Contains(ni, `"localPosts":1`) {
		t.Errorf("nodeinfo %s", ni)
	}
}

func TestDeleteBecomesTombstoneAndReachesTheSameServers(t *testing.T) {
	h := fedtest.NewHerald(t)
	r1 := fedtest.NewRemote(t, "127.0.7.3")
	r2 := fedtest.NewRemote(t, "127.0.7.4")
	bob := r1.Actor(t, "bob")
	follow(t, h, bob)
	_, act := post(t, h, h.Token, map[string]any{"type": "Note", "content": "soon gone"})
	h.Step(t)
	objID := act["object"].(map[string]any)["id"].(string)
	// bob unfollows and dan follows: the Delete still goes to bob's server,
	// which has the post, and to dan's, a follower now.
	h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Undo", map[string]any{"type": "Follow", "actor": bob.ID, "object": h.Inst.ActorID("alice")}))
	follow(t, h, r2.Actor(t, "dan"))
	res, del := post(t, h, h.Token, map[string]any{"type": "Delete", "object": objID})
	if res.StatusCode != 201 {
		t.Fatalf("delete: %d %v", res.StatusCode, del)
	}
	h.Step(t)
	for _, r := range []*fedtest.Remote{r1, r2} {
		if got := received(r, "Delete"); got["/inbox"] != 1 {
			t.Errorf("%s got Deletes %v", r.Host, got)
		}
	}
	res, body := h.Do(t, "GET", strings.TrimPrefix(objID, h.URL), "", nil)
	if res.StatusCode != 410 || !strings.Contains(body, `"type":"Tombstone"`) || strings.Contains(body, "soon gone") {
		t.Errorf("deleted object: %d %s", res.StatusCode, body)
	}
	// Deleting again, or updating the Tombstone, is refused.
	if res, _ := post(t, h, h.Token, map[string]any{"type": "Delete", "object": objID}); res.StatusCode != 400 {
		t.Errorf("second delete: %d", res.StatusCode)
	}
}

func TestUpdateOwnObject(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.5")
	follow(t, h, r.Actor(t, "bob"))
	_, act := post(t, h, h.Token, map[string]any{"type": "Note", "content": "draft"})
	objID := act["object"].(map[string]any)["id"].(string)
	res, upd := post(t, h, h.Token, map[string]any{"type": "Update", "object": map[string]any{"id": objID, "type": "Note", "content": "final"}})
	if res.StatusCode != 201 {
		t.Fatalf("update: %d %v", res.StatusCode, upd)
	}
	h.Step(t)
	if got := received(r, "Update"); got["/inbox"] != 1 {
		t.Errorf("Updates received %v", got)
	}
	_, body := h.Do(t, "GET", strings.TrimPrefix(objID, h.URL), "", nil)
	if !strings.Contains(body, "final") || !strings.Contains(body, `"updated"`) {
		t.Errorf("updated object %s", body)
	}
}

func TestFollowRemoteThenAcceptAndUndo(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.6")
	bob := r.Actor(t, "bob")
	res, fol := post(t, h, h.Token, map[string]any{"type": "Follow", "object": bob.ID})
	if res.StatusCode != 201 {
		t.Fatalf("follow: %d %v", res.StatusCode, fol)
	}
	if n := storetest.Count(t, h.DB.AllFollowing, func(g store.Following) bool { return g.Target == bob.ID && g.State == store.StatePending }); n != 1 {
		t.Fatalf("pending following %d", n)
	}
	h.Step(t)
	if got := received(r, "Follow"); got["/users/bob/inbox"] != 1 {
		t.Fatalf("Follow received %v", got)
	}
	// bob accepts, embedding our Follow.
	accept := fedtest.Activity(bob, "Accept", map[string]any{"id": fol["id"], "type": "Follow", "actor": h.Inst.ActorID("alice"), "object": bob.ID})
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, accept); code != 202 {
		t.Fatalf("accept: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowing, func(g store.Following) bool { return g.Target == bob.ID && g.State == store.StateAccepted }); n != 1 {
		t.Fatalf("accepted following %d", n)
	}
	_, following := h.Do(t, "GET", "/users/alice/following?page=1", "", nil)
	if !strings.Contains(following, bob.ID) {
		t.Errorf("following collection %s", following)
	}
	// Undo it.
	res, undo := post(t, h, h.Token, map[string]any{"type": "Undo", "object": fol["id"]})
	if res.StatusCode != 201 {
		t.Fatalf("undo: %d %v", res.StatusCode, undo)
	}
	h.Step(t)
	if n := storetest.Count(t, h.DB.AllFollowing, nil); n != 0 {
		t.Errorf("following rows after Undo %d", n)
	}
	got := r.Received()
	last := got[len(got)-1]
	if last.Doc["type"] != "Undo" || last.Path != "/users/bob/inbox" || last.Doc["object"].(map[string]any)["id"] != fol["id"] {
		t.Errorf("last received %+v", last)
	}
}

func TestIdempotencyKey(t *testing.T) {
	h := fedtest.NewHerald(t)
	note := map[string]any{"type": "Note", "content": "once"}
	res1, a1 := post(t, h, h.Token, note, "Idempotency-Key", "k-1")
	res2, a2 := post(t, h, h.Token, note, "Idempotency-Key", "k-1")
	if res1.StatusCode != 201 || res2.StatusCode != 201 || a1["id"] != a2["id"] || res2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %d %v %v", res1.StatusCode, res2.StatusCode, a1["id"], a2["id"])
	}
	_, a3 := post(t, h, h.Token, note, "Idempotency-Key", "k-2")
	if a3["id"] == a1["id"] {
		t.Error("a new key returned the old activity")
	}
	if n := storetest.Count(t, h.DB.AllObjects, nil); n != 2 {
		t.Errorf("objects %d, want 2", n)
	}
}

func TestRefusedPublications(t *testing.T) {
	h := fedtest.NewHerald(t)
	_, carolToken := h.AddActor(t, "carol", false)
	_, own := post(t, h, h.Token, map[string]any{"type": "Note", "content": "mine"})
	ownObj := own["object"].(map[string]any)["id"].(string)
	_, carolPost := h.Do(t, "POST", "/users/carol/outbox", carolToken, map[string]any{"type": "Note", "content": "carol's"})
	var cp map[string]any
	json.Unmarshal([]byte(carolPost), &cp)
	carolObj := cp["object"].(map[string]any)["id"].(string)
	before := storetest.Count(t, h.DB.AllActivities, nil)

	cases := []struct {
		name  string
		token string
		body  any
		code  int
	}{
		{"no token", "", map[string]any{"type": "Note"}, 401},
		{"bad token", "nope", map[string]any{"type": "Note"}, 401},
		{"another actor's token", carolToken, map[string]any{"type": "Note"}, 403},
		{"not an object", h.Token, []any{1, 2}, 400},
		{"no type", h.Token, map[string]any{"content": "x"}, 400},
		{"unsupported activity", h.Token, map[string]any{"type": "Flag", "object": "https://evil.example/n/1"}, 400},
		{"too deep", h.Token, map[string]any{"type": "Note", "x": nested(40)}, 400},
		{"foreign activity id", h.Token, map[string]any{"type": "Create", "id": "https://evil.example/a/1", "object": map[string]any{"type": "Note"}}, 400},
		{"foreign object id", h.Token, map[string]any{"type": "Note", "id": "https://evil.example/n/1"}, 400},
		{"another actor", h.Token, map[string]any{"type": "Create", "actor": "https://evil.example/u", "object": map[string]any{"type": "Note"}}, 400},
		{"create by reference", h.Token, map[string]any{"type": "Create", "object": "https://evil.example/n/1"}, 400},
		{"empty addressing", h.Token, map[string]any{"type": "Note", "to": []any{}, "cc": []any{}}, 400},
		{"delete of another's object", h.Token, map[string]any{"type": "Delete", "object": carolObj}, 400},
		{"delete of a foreign object", h.Token, map[string]any{"type": "Delete", "object": "https://evil.example/n/1"}, 400},
		{"delete of nothing", h.Token, map[string]any{"type": "Delete", "object": h.Inst.ActorID("alice") + "/statuses/none"}, 400},
		{"update of another's object", h.Token, map[string]any{"type": "Update", "object": map[string]any{"id": carolObj, "content": "x"}}, 400},
		{"undo of an object", h.Token, map[string]any{"type": "Undo", "object": ownObj}, 400},
		{"like without addressing", h.Token, map[string]any{"type": "Like", "object": "https://evil.example/n/1"}, 400},
		{"follow of a local actor", h.Token, map[string]any{"type": "Follow", "object": h.Inst.ActorID("carol")}, 400},
	}
	for _, c := range cases {
		res, body := h.Do(t, "POST", "/users/alice/outbox", c.token, c.body)
		if res.StatusCode != c.code || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s, want %d", c.name, res.StatusCode, body, c.code)
		}
	}
	res, _ := h.Do(t, "POST", "/users/alice/outbox", h.Token, nil, "Content-Type", "text/plain")
	if res.StatusCode != 415 {
		t.Errorf("text/plain: %d", res.StatusCode)
	}
	if n := storetest.Count(t, h.DB.AllActivities, nil); n != before {
		t.Errorf("refused requests stored %d activities", n-before)
	}
}

func TestBlockRefusesLaterFollows(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.7")
	bob := r.Actor(t, "bob")
	follow(t, h, bob)
	res, blk := post(t, h, h.Token, map[string]any{"type": "Block", "object": bob.ID})
	if res.StatusCode != 201 {
		t.Fatalf("block: %d %v", res.StatusCode, blk)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 0 {
		t.Fatalf("followers after Block: %d", n)
	}
	h.Step(t)
	if got := received(r, "Block"); got["/users/bob/inbox"] != 1 {
		t.Fatalf("Block received %v", got)
	}
	// bob follows again: refused with a Reject, not recorded.
	h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice")))
	h.Step(t)
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 0 {
		t.Errorf("a blocked actor's Follow was recorded")
	}
	if got := received(r, "Reject"); got["/users/bob/inbox"] != 1 {
		t.Errorf("Reject received %v", got)
	}
	// Undoing the Block lets bob follow again.
	post(t, h, h.Token, map[string]any{"type": "Undo", "object": blk["id"]})
	follow(t, h, bob)
	if n := storetest.Count(t, h.DB.AllFollowers, nil); n != 1 {
		t.Errorf("followers after Undo(Block) and a new Follow: %d", n)
	}
}

func TestDeleteActorTellsEveryKnownServer(t *testing.T) {
	h := fedtest.NewHerald(t)
	fans := fedtest.NewRemote(t, "127.0.7.8")       // followers
	friend := fedtest.NewRemote(t, "127.0.7.9")     // followed by alice
	pen := fedtest.NewRemote(t, "127.0.7.10")       // only got a direct message
	bystander := fedtest.NewRemote(t, "127.0.7.11") // never involved
	follow(t, h, fans.Actor(t, "bob"))
	carol := friend.Actor(t, "carol")
	_, fol := post(t, h, h.Token, map[string]any{"type": "Follow", "object": carol.ID})
	h.Deliver(t, "/users/alice/inbox", carol, fedtest.Activity(carol, "Accept", fol["id"]))
	_, note := post(t, h, h.Token, map[string]any{"type": "Note", "content": "psst", "to": []string{pen.Actor(t, "dan").ID}})
	h.Step(t)
	bystander.Actor(t, "erin")

	res, err := h.Srv.Publisher().DeleteActor(t.Context(), h.Alice, outbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Queued.Queued != 3 {
		t.Errorf("Delete queued for %d inboxes, want 3", res.Queued.Queued)
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, func(d store.DeliveryView) bool { return d.Lane == store.LaneLow }); n != 3 {
		t.Errorf("low-lane deliveries %d", n)
	}
	h.Step(t)
	for _, r := range []*fedtest.Remote{fans, friend, pen} {
		if got := received(r, "Delete"); len(got) != 1 {
			t.Errorf("%s got Deletes %v", r.Host, got)
		}
	}
	if got := received(bystander, "Delete"); len(got) != 0 {
		t.Errorf("an uninvolved server was told: %v", got)
	}
	// Everything of alice is gone.
	for _, path := range []string{"/users/alice", strings.TrimPrefix(note["object"].(map[string]any)["id"].(string), h.URL)} {
		if res, _ := h.Do(t, "GET", path, "", nil); res.StatusCode != 410 {
			t.Errorf("GET %s: %d, want 410", path, res.StatusCode)
		}
	}
	if res, _ := h.Do(t, "GET", "/.well-known/webfinger?resource=acct:alice@"+h.Inst.Domain, "", nil); res.StatusCode != 404 {
		t.Errorf("webfinger: %d", res.StatusCode)
	}
	if res, _ := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note"}); res.StatusCode != 404 && res.StatusCode != 401 {
		t.Errorf("publishing as a deleted actor: %d", res.StatusCode)
	}
	if code, _ := h.Deliver(t, "/users/alice/inbox", carol, fedtest.Activity(carol, "Like", "x")); code != 410 {
		t.Errorf("inbox of a deleted actor: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, nil) + storetest.Count(t, h.DB.AllFollowing, nil); n != 0 {
		t.Errorf("%d follows left", n)
	}
	if _, err := h.Srv.Publisher().DeleteActor(t.Context(), h.Alice, outbox.Options{}); err == nil {
		t.Error("deleted twice")
	}
}
