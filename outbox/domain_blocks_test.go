package outbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/outbox"
	"herald/store"
)

// A domain blocked by alice (not by the operator) is cut off from alice
// alone, in both directions: her followers there are removed and sent a
// Reject, her deliveries still queued there fail as skipped, her later
// posts are not delivered there, nothing from the domain reaches her inbox
// and its Follows are refused; another local actor still hears from it.
func TestActorDomainBlock(t *testing.T) {
	h := fedtest.NewHerald(t)
	dave, _ := h.AddActor(t, "dave", false)
	blocked := fedtest.NewRemote(t, "127.0.7.21")
	other := fedtest.NewRemote(t, "127.0.7.22")
	bob, eve, carl := blocked.Actor(t, "bob"), blocked.Actor(t, "eve"), other.Actor(t, "carl")
	follow(t, h, bob)
	follow(t, h, carl)
	ctx := context.Background()
	domain := strings.Split(blocked.Host, ":")[0]

	// A post queued for both servers but not sent yet.
	res, queued := post(t, h, h.Token, map[string]any{"type": "Note", "content": "before"})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("post: %d", res.StatusCode)
	}
	pub := h.Node.Publisher
	removed, created, err := pub.BlockDomain(ctx, h.Alice, domain)
	if err != nil || removed != 1 || !created {
		t.Fatalf("BlockDomain: removed %d, new %v, %v", removed, created, err)
	}
	if _, again, _ := pub.BlockDomain(ctx, h.Alice, domain); again {
		t.Error("blocking twice made a second block")
	}
	h.Step(t)
	if got := received(blocked, "Reject"); got["/users/bob/inbox"] != 1 {
		t.Errorf("bob's server got Rejects %v, want one at bob's inbox", got)
	}
	if got := received(blocked, "Create"); len(got) != 0 {
		t.Errorf("the blocked server got the queued post: %v", got)
	}
	rep, _, err := outbox.ReportFor(ctx, h.DB, queued["id"].(string))
	if err != nil || rep.Counts["delivered"] != 1 || rep.Counts["skipped"] != 1 {
		t.Errorf("report of the post queued before the block: %+v (%v)", rep, err)
	}

	// Later posts go to the other server only.
	_, later := post(t, h, h.Token, map[string]any{"type": "Note", "content": "after"})
	h.Step(t)
	rep, _, _ = outbox.ReportFor(ctx, h.DB, later["id"].(string))
	if len(rep.Targets) != 1 || rep.Targets[0].Inbox != other.SharedInbox() {
		t.Errorf("report of a later post: %+v", rep)
	}
	if got := received(blocked, "Create"); len(got) != 0 {
		t.Errorf("the blocked server got a later post: %v", got)
	}

	// Nothing from the domain reaches alice; dave still hears from it.
	for _, to := range []string{h.Inst.ActorID("alice"), h.Inst.ActorID("dave")} {
		note := fedtest.Activity(eve, "Create", map[string]any{"id": eve.ID + "/n/" + to[len(to)-4:], "type": "Note", "attributedTo": eve.ID, "to": []string{to}})
		note["to"] = []string{to}
		if code, body := h.Deliver(t, "/inbox", eve, note); code != http.StatusAccepted {
			t.Fatalf("create: %d %s", code, body)
		}
	}
	if n, err := h.DB.InboxCount(ctx, h.Alice.ID, true); err != nil || n != 0 {
		t.Errorf("alice's inbox holds %d items from the blocked domain (%v)", n, err)
	}
	if n, err := h.DB.InboxCount(ctx, dave.ID, true); err != nil || n != 1 {
		t.Errorf("dave's inbox holds %d items, want 1 (%v)", n, err)
	}
	if code, _ := h.Deliver(t, "/users/alice/inbox", eve, fedtest.Activity(eve, "Follow", h.Inst.ActorID("alice"))); code != http.StatusAccepted {
		t.Fatalf("follow: %d", code)
	}
	h.Step(t)
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.ActorID == h.Alice.ID && f.Follower == eve.ID }); n != 0 {
		t.Error("a Follow from the blocked domain was recorded")
	}
	if got := received(blocked, "Reject"); got["/users/eve/inbox"] != 1 {
		t.Errorf("eve's Follow was answered %v, want a Reject", got)
	}

	// Unblocked, the domain may follow again.
	if err := h.DB.RemoveActorDomainBlock(ctx, h.Alice.ID, domain); err != nil {
		t.Fatal(err)
	}
	if err := h.DB.RemoveActorDomainBlock(ctx, h.Alice.ID, domain); err != store.ErrNotFound {
		t.Errorf("second unblock: %v, want ErrNotFound", err)
	}
	h.Deliver(t, "/users/alice/inbox", eve, fedtest.Activity(eve, "Follow", h.Inst.ActorID("alice")))
	if n := storetest.Count(t, h.DB.AllFollowers, func(f store.Follower) bool { return f.ActorID == h.Alice.ID && f.Follower == eve.ID }); n != 1 {
		t.Error("a Follow after the unblock was not recorded")
	}
}
