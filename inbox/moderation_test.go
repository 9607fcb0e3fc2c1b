package inbox_test

import (
	"context"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/policy"
	"herald/store"
)

// TestSeveritiesAtTheInbox: each severity changes what the inbox stores.
// A limited domain's Follow waits for approval, and its posts reach only
// the local actors that follow their author; a domain that rejects media
// has its attachments removed before anything is stored; a suspended
// account is dropped (202, nothing stored); clearing a rule lets the next
// activity through as before.
func TestSeveritiesAtTheInbox(t *testing.T) {
	ctx := context.Background()
	h := fedtest.NewHerald(t)
	carolActor, _ := h.AddActor(t, "carol", false)
	loud := fedtest.NewRemote(t, "127.0.8.1") // limited
	pics := fedtest.NewRemote(t, "127.0.8.2") // media rejected
	ok := fedtest.NewRemote(t, "127.0.8.3")   // one account suspended
	dan, eve, fay, troll := loud.Actor(t, "dan"), loud.Actor(t, "eve"), pics.Actor(t, "fay"), ok.Actor(t, "troll")
	alice, carol := h.Inst.ActorID("alice"), h.Inst.ActorID("carol")
	for _, rule := range []store.BlockedDomain{
		{Domain: "127.0.8.1", Severity: policy.SeveritySilence},
		{Domain: "127.0.8.2", Severity: policy.SeverityNoop, RejectMedia: true},
	} {
		if _, err := h.DB.SetDomainRule(ctx, rule); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.DB.SetAccountRule(ctx, store.AccountRule{Account: troll.ID, Severity: policy.SeveritySuspend}); err != nil {
		t.Fatal(err)
	}

	// A limited account's Follow of an actor who approves everyone waits.
	if code, _ := h.Deliver(t, "/users/alice/inbox", dan, fedtest.Activity(dan, "Follow", alice)); code != 202 {
		t.Fatalf("follow: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.Follower == dan.ID && f.State == store.StatePending }); n != 1 {
		t.Errorf("a limited account's Follow: %d pending rows, want 1", n)
	}

	// carol follows dan; a public post of each limited account addressed
	// to both local actors reaches only carol, and only from dan.
	if err := h.DB.AddFollowing(ctx, store.Following{ActorID: carolActor.ID, Target: dan.ID, FollowID: carol + "/follows/1", State: "accepted"}, h.Clock()); err != nil {
		t.Fatal(err)
	}
	for _, who := range []*fedtest.RemoteActor{dan, eve} {
		note := fedtest.Activity(who, "Create", map[string]any{"id": who.ID + "/notes/1", "type": "Note", "content": "hi", "attributedTo": who.ID,
			"to": []string{"https://www.w3.org/ns/activitystreams#Public", alice, carol}})
		note["to"] = []string{"https://www.w3.org/ns/activitystreams#Public", alice, carol}
		if code, _ := h.Deliver(t, "/inbox", who, note); code != 202 {
			t.Fatalf("create: %d", code)
		}
	}
	items := func(actor string) []string {
		t.Helper()
		a, err := h.DB.ActorByName(ctx, actor)
		if err != nil {
			t.Fatal(err)
		}
		page, err := h.DB.InboxPage(ctx, a.ID, 0, 0, 50, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range page {
			if it.Type == "Create" {
				out = append(out, it.Actor)
			}
		}
		return out
	}
	if got := items("alice"); len(got) != 0 {
		t.Errorf("alice, who follows neither, got the limited accounts' posts: %v", got)
	}
	if got := items("carol"); len(got) != 1 || got[0] != dan.ID {
		t.Errorf("carol got %v, want dan's post alone", got)
	}

	// Rejected media: the attachment is gone from what is stored.
	note := fedtest.Activity(fay, "Create", map[string]any{"id": fay.ID + "/notes/1", "type": "Note", "content": "look", "attributedTo": fay.ID,
		"attachment": []any{map[string]any{"type": "Document", "mediaType": "image/png", "url": pics.URL + "/media/1.png"}}})
	note["to"] = []string{alice}
	if code, _ := h.Deliver(t, "/inbox", fay, note); code != 202 {
		t.Fatalf("create with media: %d", code)
	}
	all, err := h.DB.AllInboxItems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range all {
		if it.Actor == fay.ID && (strings.Contains(it.Body, "attachment") || strings.Contains(it.Body, "1.png")) {
			t.Errorf("the attachment was stored: %s", it.Body)
		}
	}
	if n := storetest.Count(t, h.DB.AllInboxItems, func(it store.InboxItem) bool { return it.Actor == fay.ID }); n != 1 {
		t.Errorf("fay's post: %d items, want 1", n)
	}

	// A suspended account: dropped, nothing stored.
	if code, _ := h.Deliver(t, "/users/alice/inbox", troll, fedtest.Activity(troll, "Follow", alice)); code != 202 {
		t.Fatalf("suspended follow: %d", code)
	}
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.Follower == troll.ID }); n != 0 {
		t.Errorf("a suspended account's Follow was recorded")
	}
	if err := h.DB.ClearAccountRule(ctx, troll.ID); err != nil {
		t.Fatal(err)
	}
	h.Deliver(t, "/users/alice/inbox", troll, fedtest.Activity(troll, "Follow", alice))
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.Follower == troll.ID && f.State == store.StateAccepted }); n != 1 {
		t.Errorf("after the rule was cleared: %d accepted rows, want 1", n)
	}
}
