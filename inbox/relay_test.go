package inbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/jobs"
	"herald/store"
)

// relayFixture is a Herald, a fake relay on its own loopback address, and
// a third server whose posts the relay forwards.
type relayFixture struct {
	h      *fedtest.Herald
	relay  *fedtest.Remote
	ra     *fedtest.RemoteActor // the relay's actor
	third  *fedtest.Remote
	carl   *fedtest.RemoteActor // on the third server
	follow map[string]any       // the instance actor's Follow, as the relay got it
}

func newRelayFixture(t *testing.T, relayIP, thirdIP string) *relayFixture {
	f := &relayFixture{h: fedtest.NewHerald(t), relay: fedtest.NewRemote(t, relayIP), third: fedtest.NewRemote(t, thirdIP)}
	f.ra, f.carl = f.relay.Actor(t, "relay"), f.third.Actor(t, "carl")
	return f
}

// subscribe runs herald relay add URL and returns what the relay received:
// one Follow from the instance actor, signed with its key, at inbox.
func (f *relayFixture) subscribe(t *testing.T, url, inbox string) {
	t.Helper()
	h := f.h
	if j := h.RunJob(t, jobs.KindRelayAdd, 0, jobs.Args{Target: url}); j.State != store.JobDone {
		t.Fatalf("relay add: %s %s", j.State, j.Error)
	}
	h.Step(t)
	got := f.relay.Received()
	if len(got) != 1 || got[0].Path != inbox || got[0].Doc["type"] != "Follow" || got[0].KeyID != h.Inst.InstanceKeyID() ||
		got[0].Doc["actor"] != h.Inst.InstanceActorID() {
		t.Fatalf("relay got %+v, want one Follow from the instance actor at %s", got, inbox)
	}
	f.follow = got[0].Doc
	if id, _ := f.follow["id"].(string); !strings.HasPrefix(id, h.Inst.InstanceActorID()+"/activities/") {
		t.Errorf("Follow id %q", id)
	}
}

// post publishes a public Note as alice and returns the inboxes it reached.
func (f *relayFixture) post(t *testing.T) []string {
	t.Helper()
	h := f.h
	before := len(f.relay.Received())
	if res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "hello relays"}); res.StatusCode != 201 {
		t.Fatalf("post: %d %s", res.StatusCode, body)
	}
	h.Step(t)
	var paths []string
	for _, rec := range f.relay.Received()[before:] {
		if rec.Doc["type"] == "Create" {
			paths = append(paths, rec.Path)
		}
	}
	return paths
}

// note is a public post of carl's, served by the third server, and its
// Create.
func (f *relayFixture) note(n, content string) (map[string]any, map[string]any) {
	id := f.carl.ID + "/statuses/" + n
	note := map[string]any{"@context": federation.ContextAS, "id": id, "type": "Note", "attributedTo": f.carl.ID,
		"content": content, "to": []string{federation.Public}}
	create := map[string]any{"@context": federation.ContextAS, "id": id + "/activity", "type": "Create", "actor": f.carl.ID,
		"object": note, "to": []string{federation.Public}}
	return note, create
}

// feed reads the relay feed with alice's token.
func (f *relayFixture) feed(t *testing.T) []map[string]any {
	t.Helper()
	code, page := readInbox(t, f.h, "/actor/inbox?page=true", f.h.Token)
	if code != 200 {
		t.Fatalf("relay feed: %d %v", code, page)
	}
	var out []map[string]any
	for _, it := range page["orderedItems"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// drops counts the inbox's drops for a reason.
func drops(h *fedtest.Herald, reason string) int {
	n := 0
	for _, d := range h.Srv.Inbox().Metrics.RecentDrops() {
		if d.Reason == reason {
			n++
		}
	}
	return n
}

// TestMastodonStyleRelay: subscribed by its inbox URL (which serves no
// actor), the relay gets a Follow of as:Public; until it accepts, public
// posts do not go to it, then they do. What it forwards is verified against
// its origin (the third server's copy is kept, not the relay's), kept once
// in the relay feed however often it comes, and a forwarded activity its
// origin does not serve is dropped. Remove sends the Undo.
func TestMastodonStyleRelay(t *testing.T) {
	f := newRelayFixture(t, "127.0.2.1", "127.0.2.2")
	h := f.h
	inbox := f.relay.URL + "/inbox"
	f.subscribe(t, inbox, "/inbox")
	if f.follow["object"] != federation.Public {
		t.Fatalf("Follow of %v, want as:Public", f.follow["object"])
	}
	if j := h.RunJob(t, jobs.KindRelayAdd, 0, jobs.Args{Target: inbox}); j.State != store.JobFailed {
		t.Errorf("adding it twice: %s", j.State)
	}
	if got := f.post(t); len(got) != 0 {
		t.Errorf("a pending relay got the post at %v", got)
	}
	// Another server cannot answer for the relay.
	h.Deliver(t, "/actor/inbox", f.carl, fedtest.Activity(f.carl, "Accept", f.follow))
	if n := storetest.Count(t, h.DB.Relays, func(r store.Relay) bool { return r.State == store.RelayPending }); n != 1 {
		t.Fatalf("a third server's Accept of the relay Follow was taken")
	}
	accept := fedtest.Activity(f.ra, "Accept", f.follow)
	if code, _ := h.Deliver(t, "/actor/inbox", f.ra, accept); code != 202 {
		t.Fatalf("Accept: %d", code)
	}
	r, err := h.DB.RelayByURL(t.Context(), inbox)
	if err != nil || r.State != store.RelayAccepted || r.Actor != f.ra.ID || r.Style != store.RelayMastodon {
		t.Fatalf("relay after its Accept: %+v %v", r, err)
	}
	if got := f.post(t); len(got) != 1 || got[0] != "/inbox" {
		t.Errorf("the public post reached the relay at %v, want once at its inbox", got)
	}
	// Signed by its author for the relay's subscribers (Mastodon drops a
	// relayed post without it).
	got := f.relay.Received()
	create := got[len(got)-1].Doc
	if sig := federation.Object(create["signature"]); sig["creator"] != h.Inst.KeyID("alice") {
		t.Errorf("the relayed post's signature: %v", create["signature"])
	} else if err := fedtest.VerifyLD(create, h.Alice.PublicKeyPEM); err != nil {
		t.Errorf("the relayed post's LD signature does not verify: %v", err)
	}

	// A Create forwarded by the relay: what the third server serves is
	// kept, not the relay's copy.
	_, genuine := f.note("1", "from carl")
	f.third.Serve("/users/carl/statuses/1/activity", genuine)
	_, tampered := f.note("1", "tampered by the relay")
	if code, _ := h.Deliver(t, "/actor/inbox", f.ra, tampered); code != 202 {
		t.Fatalf("forward: %d", code)
	}
	items := f.feed(t)
	if len(items) != 1 || items[0]["type"] != "Create" || !strings.Contains(asJSON(items[0]), "from carl") ||
		strings.Contains(asJSON(items[0]), "tampered") {
		t.Fatalf("feed after the forward: %v", items)
	}
	// Forwarded again, to the shared inbox: a duplicate.
	h.Deliver(t, "/inbox", f.ra, tampered)
	// A forward its origin does not serve: dropped.
	_, forged := f.note("2", "forged")
	h.Deliver(t, "/actor/inbox", f.ra, forged)
	if n := len(f.feed(t)); n != 1 {
		t.Errorf("%d items in the feed, want 1", n)
	}
	if drops(h, "duplicate") != 1 || drops(h, "foreign_origin") != 1 {
		t.Errorf("drops %v", h.Srv.Inbox().Metrics.RecentDrops())
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Type == "Create" }); n != 1 {
		t.Errorf("%d inbox items stored, want 1", n)
	}
	// The origin's own Delete applies to what the feed holds, and is kept
	// there as history.
	h.Deliver(t, "/inbox", f.carl, fedtest.Activity(f.carl, "Delete", genuine["object"].(map[string]any)["id"]))
	if n := len(f.feed(t)); n != 0 {
		t.Errorf("%d items in the feed after the post's Delete", n)
	}
	if _, page := readInbox(t, h, "/actor/inbox?page=true&history=true", h.Token); len(page["orderedItems"].([]any)) != 2 {
		t.Errorf("the feed's history: %v", page["orderedItems"])
	}
	// The feed is for this instance's apps.
	if code, _ := readInbox(t, h, "/actor/inbox", ""); code != 401 {
		t.Errorf("feed without a token: %d", code)
	}

	if j := h.RunJob(t, jobs.KindRelayRemove, 0, jobs.Args{Target: inbox}); j.State != store.JobDone {
		t.Fatalf("relay remove: %s %s", j.State, j.Error)
	}
	h.Step(t)
	got = f.relay.Received()
	undo := got[len(got)-1].Doc
	if obj := federation.Object(undo["object"]); undo["type"] != "Undo" || obj["id"] != f.follow["id"] || obj["object"] != federation.Public {
		t.Errorf("last the relay got %v, want the Undo of %v", undo, f.follow["id"])
	}
	if n := storetest.Count(t, h.DB.Relays, nil); n != 0 {
		t.Errorf("%d relays after remove", n)
	}
}

// TestLitePubStyleRelay: subscribed by its actor's URL, the relay gets a
// Follow of its actor at its inbox; it accepts and follows the instance
// actor back, which accepts. Public posts go to it. Its Announce of a third
// server's post (by reference) is stored with the post as the origin
// serves it, once; an Announce of a post its origin does not serve is
// dropped, and so is a Follow of the instance actor by anyone else.
func TestLitePubStyleRelay(t *testing.T) {
	f := newRelayFixture(t, "127.0.2.3", "127.0.2.4")
	h := f.h
	f.subscribe(t, f.ra.ID, "/users/relay/inbox")
	if f.follow["object"] != f.ra.ID {
		t.Fatalf("Follow of %v, want the relay's actor", f.follow["object"])
	}
	// Accept naming the Follow by its id, as Pleroma's relay does.
	h.Deliver(t, "/actor/inbox", f.ra, fedtest.Activity(f.ra, "Accept", f.follow["id"]))
	if r, err := h.DB.RelayByURL(t.Context(), f.ra.ID); err != nil || r.State != store.RelayAccepted || r.Style != store.RelayLitePub {
		t.Fatalf("relay after its Accept: %+v %v", r, err)
	}
	back := fedtest.Activity(f.ra, "Follow", h.Inst.InstanceActorID())
	h.Deliver(t, "/actor/inbox", f.ra, back)
	stranger := f.third.Actor(t, "stranger")
	h.Deliver(t, "/actor/inbox", stranger, fedtest.Activity(stranger, "Follow", h.Inst.InstanceActorID()))
	h.Step(t)
	got := f.relay.Received()
	if last := got[len(got)-1]; last.Doc["type"] != "Accept" || last.KeyID != h.Inst.InstanceKeyID() || federation.Object(last.Doc["object"])["id"] != back["id"] {
		t.Fatalf("relay got %v, want the instance actor's Accept of its Follow", last.Doc)
	}
	if n := len(f.third.Received()); n != 0 {
		t.Errorf("the stranger's Follow of the instance actor was answered")
	}
	if got := f.post(t); len(got) != 1 || got[0] != "/users/relay/inbox" {
		t.Errorf("the public post reached the relay at %v", got)
	}

	note, _ := f.note("5", "announced by the relay")
	f.third.Serve("/users/carl/statuses/5", note)
	announce := fedtest.Activity(f.ra, "Announce", note["id"])
	announce["to"] = []string{f.ra.ID + "/followers"}
	if code, _ := h.Deliver(t, "/actor/inbox", f.ra, announce); code != 202 {
		t.Fatalf("Announce: %d", code)
	}
	again := fedtest.Activity(f.ra, "Announce", note["id"])
	h.Deliver(t, "/inbox", f.ra, again)
	forged := fedtest.Activity(f.ra, "Announce", f.carl.ID+"/statuses/6")
	h.Deliver(t, "/actor/inbox", f.ra, forged)
	items := f.feed(t)
	if len(items) != 1 || federation.Object(items[0]["object"])["content"] != "announced by the relay" {
		t.Fatalf("feed: %v", items)
	}
	if drops(h, "duplicate") != 1 || drops(h, "foreign_origin") != 1 || drops(h, "unaddressed") != 1 {
		t.Errorf("drops %v", h.Srv.Inbox().Metrics.RecentDrops())
	}
}
