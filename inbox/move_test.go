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

// runJob runs a job on h and fails the test unless it ends in state.
func runJob(t *testing.T, h *fedtest.Herald, state, kind string, actorID int64, args jobs.Args) *store.Job {
	t.Helper()
	j := h.RunJob(t, kind, actorID, args)
	if j.State != state {
		t.Fatalf("%s %v: %s %s, want %s", kind, args, j.State, j.Error, state)
	}
	return j
}

// deliverAll runs the delivery schedulers of the Heralds until none has
// anything due: each is the others' remote server.
func deliverAll(t *testing.T, hs ...*fedtest.Herald) {
	t.Helper()
	for range 10 {
		n := 0
		for _, h := range hs {
			n += h.Step(t)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("deliveries kept coming")
}

// actorDoc fetches a local actor's document from h.
func actorDoc(t *testing.T, h *fedtest.Herald, name string) map[string]any {
	t.Helper()
	_, body := h.Do(t, "GET", "/users/"+name, "", nil)
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestMoveBetweenHeralds moves alice of Herald A to bob of Herald B, with
// carol of Herald C following alice. The move is refused until bob lists
// alice in alsoKnownAs (herald actor alias on B); then A records movedTo
// (actor document and WebFinger) and sends the Move, and C, having fetched
// bob from B, makes carol follow bob (B accepts) and unfollow alice (A
// removes the follower). A refuses new followers of alice from then on.
func TestMoveBetweenHeralds(t *testing.T) {
	a, b, c := fedtest.NewHerald(t), fedtest.NewHerald(t), fedtest.NewHerald(t)
	bob, _ := b.AddActor(t, "bob", false)
	carol, carolToken := c.AddActor(t, "carol", false)
	alice, bobID := a.Inst.ActorID("alice"), b.Inst.ActorID("bob")

	runJob(t, c, store.JobDone, jobs.KindFollow, carol.ID, jobs.Args{Target: alice})
	deliverAll(t, a, b, c)
	if n := storetest.Count(t, c.DB.AllFollowing, func(g store.Following) bool { return g.Target == alice && g.State == store.StateAccepted }); n != 1 {
		t.Fatalf("carol does not follow alice: %d", n)
	}

	// Refused: bob does not list alice yet.
	j := runJob(t, a, store.JobFailed, jobs.KindMove, a.Alice.ID, jobs.Args{Target: bobID})
	if !strings.Contains(j.Error, "alsoKnownAs") {
		t.Errorf("refusal: %s", j.Error)
	}
	// Moving here: bob lists alice (by handle, looked up with WebFinger).
	runJob(t, b, store.JobDone, jobs.KindAlias, bob.ID, jobs.Args{Target: "@alice@" + a.Inst.Domain})
	if aka := federation.IDs(actorDoc(t, b, "bob")["alsoKnownAs"]); len(aka) != 1 || aka[0] != alice {
		t.Fatalf("bob's alsoKnownAs %v", aka)
	}
	// Moving away.
	runJob(t, a, store.JobDone, jobs.KindMove, a.Alice.ID, jobs.Args{Target: bobID})
	if doc := actorDoc(t, a, "alice"); doc["movedTo"] != bobID {
		t.Errorf("alice's movedTo %v", doc["movedTo"])
	}
	_, wf := a.Do(t, "GET", "/.well-known/webfinger?resource=acct:alice@"+a.Inst.Domain, "", nil)
	if !strings.Contains(wf, `"href":"`+bobID+`"`) || !strings.Contains(wf, "activitystreams#movedTo") {
		t.Errorf("WebFinger after the move: %s", wf)
	}
	deliverAll(t, a, b, c)

	if n := storetest.Count(t, c.DB.AllFollowing, func(g store.Following) bool {
		return g.ActorID == carol.ID && g.Target == bobID && g.State == store.StateAccepted
	}); n != 1 {
		t.Errorf("carol does not follow bob (accepted)")
	}
	if n := storetest.Count(t, c.DB.AllFollowing, func(g store.Following) bool { return g.Target == alice }); n != 0 {
		t.Errorf("carol still follows alice")
	}
	if n := storetest.Count(t, b.DB.AllFollowers, func(f store.Follower) bool { return f.ActorID == bob.ID && f.Follower == c.Inst.ActorID("carol") }); n != 1 {
		t.Errorf("bob has no follower carol")
	}
	if n := storetest.Count(t, a.DB.AllFollowers, nil); n != 0 {
		t.Errorf("alice still has %d followers", n)
	}
	// carol's app sees the Move.
	if _, page := readInbox(t, c, "/users/carol/inbox?page=true", carolToken); !strings.Contains(asJSON(page), `"type":"Move"`) {
		t.Errorf("carol's inbox: %v", page)
	}

	// A moved actor takes no new followers.
	r := fedtest.NewRemote(t, "127.0.3.1")
	dan := r.Actor(t, "dan")
	a.Deliver(t, "/users/alice/inbox", dan, fedtest.Activity(dan, "Follow", alice))
	a.Step(t)
	if got := r.Received(); len(got) != 1 || got[0].Doc["type"] != "Reject" {
		t.Errorf("dan's Follow of the moved alice was answered with %d activities, not one Reject", len(got))
	}
	if n := storetest.Count(t, a.DB.AllFollowers, nil); n != 0 {
		t.Errorf("a moved alice took a follower")
	}
	// Moving again to the same place is refused.
	runJob(t, a, store.JobFailed, jobs.KindMove, a.Alice.ID, jobs.Args{Target: bobID})
}

// TestInboundMoveRefusals: a Move is applied only when the actor moves
// itself, a local actor follows it, and the target, fetched from its own
// server, lists it in alsoKnownAs; every other Move is dropped with a
// reason, and nothing changes.
func TestInboundMoveRefusals(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.3.2")
	s := fedtest.NewRemote(t, "127.0.3.3")
	mia, stranger := r.Actor(t, "mia"), r.Actor(t, "stranger")
	target := s.Actor(t, "mia")

	runJob(t, h, store.JobDone, jobs.KindFollow, h.Alice.ID, jobs.Args{Target: mia.ID})
	h.Step(t)
	follow := r.Received()[0].Doc
	h.Deliver(t, "/inbox", mia, fedtest.Activity(mia, "Accept", follow))

	move := func(from *fedtest.RemoteActor, object, to string) map[string]any {
		m := fedtest.Activity(from, "Move", object)
		m["target"] = to
		m["to"] = []string{from.ID + "/followers"}
		return m
	}
	cases := []struct {
		name, reason string
		from         *fedtest.RemoteActor
		object, to   string
	}{
		{"not the actor itself", "move_invalid", mia, stranger.ID, target.ID},
		{"to Herald itself", "move_invalid", mia, mia.ID, h.Inst.ActorID("alice")},
		{"nobody follows it", "move_not_followed", stranger, stranger.ID, target.ID},
		{"the target does not list it", "move_unverified", mia, mia.ID, target.ID},
	}
	for _, tc := range cases {
		before := drops(h, tc.reason)
		if code, _ := h.Deliver(t, "/inbox", tc.from, move(tc.from, tc.object, tc.to)); code != 202 {
			t.Fatalf("%s: %d", tc.name, code)
		}
		if drops(h, tc.reason) != before+1 {
			t.Errorf("%s: not dropped as %s (%v)", tc.name, tc.reason, h.Srv.Inbox().Metrics.RecentDrops())
		}
	}
	if n := storetest.Count(t, h.DB.AllFollowing, func(g store.Following) bool { return g.Target == mia.ID && g.State == store.StateAccepted }); n != 1 {
		t.Fatalf("alice's follow of mia changed")
	}
	// The target's document is fetched afresh: listing mia now is enough.
	s.Alias(target, mia.ID)
	h.Deliver(t, "/inbox", mia, move(mia, mia.ID, target.ID))
	if n := storetest.Count(t, h.DB.AllFollowing, func(g store.Following) bool { return g.Target == target.ID && g.State == store.StatePending }); n != 1 {
		t.Errorf("alice does not follow the target")
	}
	h.Step(t)
	if got := s.Received(); len(got) != 1 || got[0].Doc["type"] != "Follow" || got[0].Path != "/users/mia/inbox" {
		t.Errorf("the target got %d activities, want alice's Follow at its inbox", len(got))
	}
	if got := r.Received(); got[len(got)-1].Doc["type"] != "Undo" || federation.Object(got[len(got)-1].Doc["object"])["id"] != follow["id"] {
		t.Errorf("mia's server got %v last, want the Undo of alice's Follow", got[len(got)-1].Doc)
	}
}
