package inbox_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestPreclaimedIDsDoNotStopTheGenuineActivity: mallory sends, first,
// activities carrying ids of vic's server (Mastodon's are predictable). Each
// is checked with vic's server, which does not serve them as sent, so each
// is dropped and none is marked as seen; vic's genuine activities with the
// same ids are then applied, with vic as the follower.
func TestPreclaimedIDsDoNotStopTheGenuineActivity(t *testing.T) {
	h := fedtest.NewHerald(t)
	v := fedtest.NewRemote(t, "127.0.1.1")
	m := fedtest.NewRemote(t, "127.0.1.2")
	vic, mallory := v.Actor(t, "vic"), m.Actor(t, "mallory")
	alice := h.Inst.ActorID("alice")

	follow := fedtest.Activity(vic, "Follow", alice)
	follow["id"] = vic.ID + "#follows/1"
	create := fedtest.Activity(vic, "Create", map[string]any{"id": vic.ID + "/statuses/1", "type": "Note", "attributedTo": vic.ID, "content": "genuine"})
	create["to"] = alice
	for _, genuine := range []map[string]any{follow, create} {
		claim := map[string]any{}
		for k, val := range genuine {
			claim[k] = val
		}
		claim["actor"] = mallory.ID // as mallory, with vic's id
		if code, _ := h.Deliver(t, "/users/alice/inbox", mallory, claim); code != 202 {
			t.Fatalf("pre-claim %s: %d", genuine["type"], code)
		}
	}
	// The claims were checked with vic's server (signed as Herald's
	// instance actor), and nothing of them was kept.
	fetched := map[string]string{}
	for _, f := range v.Fetches() {
		fetched[f.Path] = f.KeyID
	}
	for _, path := range []string{"/users/vic", "/users/vic/activities/" + lastPart(create["id"].(string))} {
		if fetched[path] != h.Inst.InstanceKeyID() {
			t.Errorf("GET %s on vic's server: keyId %q, want the instance actor's (%v)", path, fetched[path], fetched)
		}
	}
	for what, n := range map[string]int{
		"followers":            storetest.Count(t, h.DB.AllFollowers, nil),
		"inbox items":          storetest.Count(t, h.DB.AllInboxItems, nil),
		"processed activities": storetest.Count(t, h.DB.ProcessedIDs, nil),
		"deliveries":           storetest.Count(t, h.DB.AllDeliveries, nil),
	} {
		if n != 0 {
			t.Errorf("%d %s stored after the pre-claims", n, what)
		}
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="foreign_origin"} 2`) {
		t.Error("the pre-claims were not counted as foreign_origin")
	}
	// vic's genuine activities come later and are applied.
	for _, genuine := range []map[string]any{follow, create} {
		if code, _ := h.Deliver(t, "/users/alice/inbox", vic, genuine); code != 202 {
			t.Fatalf("genuine %s: %d", genuine["type"], code)
		}
	}
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.Follower == vic.ID && f.FollowID == follow["id"] }); n != 1 {
		t.Errorf("vic's Follow: %d follower rows", n)
	}
	if n := storetest.Count(t, h.DB.AllDeliveries, nil); n != 1 {
		t.Errorf("deliveries %d, want vic's Accept", n)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Actor == vic.ID && strings.Contains(i.Body, "genuine") }); n != 1 {
		t.Errorf("vic's Create: %d items", n)
	}
}

// TestActivityFromAnotherOriginIsTakenFromIt: an activity whose actor and
// id are on another host than its signer (a forward) is fetched from that
// host and what the host serves is applied, not what was sent; if the host
// does not serve it, the activity is dropped and not marked as seen.
func TestActivityFromAnotherOriginIsTakenFromIt(t *testing.T) {
	h := fedtest.NewHerald(t)
	v := fedtest.NewRemote(t, "127.0.1.1")
	m := fedtest.NewRemote(t, "127.0.1.2")
	vic, mallory := v.Actor(t, "vic"), m.Actor(t, "mallory")
	alice := h.Inst.ActorID("alice")
	note := func(content string) map[string]any {
		a := fedtest.Activity(vic, "Create", map[string]any{"id": vic.ID + "/statuses/7", "type": "Note", "attributedTo": vic.ID, "content": content})
		a["id"] = vic.ID + "/statuses/7/activity"
		a["to"] = alice
		return a
	}
	// Not served (yet): dropped, nothing kept.
	if code, _ := h.Deliver(t, "/inbox", mallory, note("forged")); code != 202 {
		t.Fatalf("unserved forward: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil) + storetest.Count(t, h.DB.ProcessedIDs, nil); n != 0 {
		t.Fatalf("%d rows kept from an activity its origin does not serve", n)
	}
	// Served: what vic's server serves is stored, as vic's.
	genuine := note("genuine")
	v.Serve("/users/vic/statuses/7/activity", genuine)
	if code, _ := h.Deliver(t, "/inbox", mallory, note("forged")); code != 202 {
		t.Fatalf("served forward: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool {
		return i.Actor == vic.ID && strings.Contains(i.Body, "genuine") && !strings.Contains(i.Body, "forged")
	}); n != 1 {
		t.Errorf("%d items with the origin's copy", n)
	}
	// The origin serving something else under that id is no better.
	other := note("other")
	other["id"] = vic.ID + "/statuses/8/activity"
	v.Serve("/users/vic/statuses/8/activity", genuine) // a different id inside
	if code, _ := h.Deliver(t, "/inbox", mallory, other); code != 202 {
		t.Fatalf("mismatched forward: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 1 {
		t.Errorf("items %d after a forward whose origin serves another id", n)
	}
}

// TestObjectsMustBeTheActorsOwn: a Create whose object's id or author is on
// another server is refused without fetching anything; an Announce
// embedding someone else's object stores the object as its origin serves
// it; an embedded object of Herald's own is kept as a reference only; and
// ids on Herald's own host are refused from remote senders.
func TestObjectsMustBeTheActorsOwn(t *testing.T) {
	h := fedtest.NewHerald(t)
	v := fedtest.NewRemote(t, "127.0.1.1")
	m := fedtest.NewRemote(t, "127.0.1.2")
	vic, mallory := v.Actor(t, "vic"), m.Actor(t, "mallory")
	alice := h.Inst.ActorID("alice")
	deliver := func(act map[string]any) {
		t.Helper()
		act["to"] = alice
		if code, _ := h.Deliver(t, "/users/alice/inbox", mallory, act); code != 202 {
			t.Fatalf("%s: %d", act["type"], code)
		}
	}
	before := v.Requests.Load()
	deliver(fedtest.Activity(mallory, "Create", map[string]any{"id": vic.ID + "/statuses/1", "type": "Note", "attributedTo": vic.ID, "content": "as vic"}))
	deliver(fedtest.Activity(mallory, "Create", map[string]any{"id": mallory.ID + "/statuses/1", "type": "Note", "attributedTo": vic.ID, "content": "as vic"}))
	deliver(fedtest.Activity(mallory, "Update", map[string]any{"id": vic.ID + "/statuses/1", "type": "Note", "attributedTo": vic.ID, "content": "as vic"}))
	if n := storetest.Count(t, h.DB.AllInboxItems, nil); n != 0 {
		t.Errorf("%d misattributed items stored", n)
	}
	if n := v.Requests.Load() - before; n != 0 {
		t.Errorf("vic's server was contacted %d times for misattributed Creates", n)
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="misattributed"} 3`) {
		t.Error("misattributed drops not counted")
	}
	// mallory's own Create is fine.
	deliver(fedtest.Activity(mallory, "Create", map[string]any{"id": mallory.ID + "/statuses/2", "type": "Note", "attributedTo": mallory.ID, "content": "mine"}))
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return strings.Contains(i.Body, "mine") }); n != 1 {
		t.Errorf("mallory's own Create: %d items", n)
	}

	// An Announce of vic's post with a forged copy embedded: the copy
	// vic's server serves is what is stored.
	v.Serve("/users/vic/statuses/3", map[string]any{"@context": "https://www.w3.org/ns/activitystreams",
		"id": vic.ID + "/statuses/3", "type": "Note", "attributedTo": vic.ID, "content": "the real words"})
	deliver(fedtest.Activity(mallory, "Announce", map[string]any{"id": vic.ID + "/statuses/3", "type": "Note", "attributedTo": vic.ID, "content": "forged words"}))
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool {
		return i.Type == "Announce" && strings.Contains(i.Body, "the real words") && !strings.Contains(i.Body, "forged")
	}); n != 1 {
		t.Errorf("Announce: %d items with the origin's copy", n)
	}
	// Not served by its origin: dropped.
	deliver(fedtest.Activity(mallory, "Announce", map[string]any{"id": vic.ID + "/statuses/404", "type": "Note", "attributedTo": vic.ID}))
	if n := storetest.Count(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Type == "Announce" }); n != 1 {
		t.Errorf("Announce items %d after one its origin does not serve", n)
	}
	// Herald's own object embedded: only its id is kept.
	own := h.Inst.ActorID("alice") + "/statuses/1"
	deliver(fedtest.Activity(mallory, "Like", map[string]any{"id": own, "type": "Note", "attributedTo": alice, "content": "words alice never wrote"}))
	var body string
	if it, ok := storetest.First(t, h.DB.AllInboxItems, func(i store.InboxItem) bool { return i.Type == "Like" }); ok {
		body = it.Body
	}
	var like map[string]any
	json.Unmarshal([]byte(body), &like)
	if like["object"] != own {
		t.Errorf("Like of a local object stored as %s", body)
	}
	// Ids on Herald's own host, from a remote sender: refused.
	forged := fedtest.Activity(mallory, "Create", map[string]any{"id": mallory.ID + "/statuses/9", "type": "Note", "attributedTo": mallory.ID})
	forged["id"] = h.Inst.ActorID("alice") + "/activities/1"
	before = int64(storetest.Count(t, h.DB.AllInboxItems, nil))
	deliver(forged)
	if n := int64(storetest.Count(t, h.DB.AllInboxItems, nil)); n != before {
		t.Errorf("an activity with a local id was stored")
	}
	// A request signed with a key id on Herald's host: refused outright.
	impostor := &fedtest.RemoteActor{ID: alice, Key: mallory.Key}
	if code, _ := h.Deliver(t, "/inbox", impostor, fedtest.Activity(impostor, "Like", mallory.ID+"/statuses/2")); code != 403 {
		t.Errorf("signed with a local key id: %d, want 403", code)
	}
}

func lastPart(iri string) string {
	u, _ := url.Parse(iri)
	parts := strings.Split(u.Path, "/")
	return parts[len(parts)-1]
}
