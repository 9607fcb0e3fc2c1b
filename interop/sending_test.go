package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"herald/internal/storetest"
	"herald/store"
	"strings"
	"testing"
	"time"
)

// Deadlines for things that happen in the background (deliveries, retries,
// the scheduler's idle wake-up). They are generous upper bounds for a slow
// CI machine, not expectations: every wait polls and returns as soon as the
// condition holds.
const (
	deliveryDeadline = 20 * time.Second
	// A delivery queued by a CLI command (a job the server runs, then the
	// delivery it queues).
	cliDeliveryDeadline = 40 * time.Second
	// Two retries with --test-retry-scale 0.01 should take under a second.
	retryDeadline = 60 * time.Second
)

// followAccepted makes the peer follow the local actor name and waits until
// Herald's Accept has reached the peer and Fedify marked the Follow
// accepted, so that nothing is left in flight towards the peer's inboxes.
func followAccepted(t *testing.T, h *Herald, p *Peer, name string) Sent {
	t.Helper()
	sent := p.Follow(t, h.ActorID(name))
	waitPeerFollow(t, p, sent.FollowID, "accepted", deliveryDeadline)
	return sent
}

// waitPeerFollow waits until the peer's Follow followID is in state.
func waitPeerFollow(t *testing.T, p *Peer, followID, state string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func() error {
		fs := p.Following(t)
		for _, f := range fs {
			if f.FollowID == followID && f.State == state {
				return nil
			}
		}
		return fmt.Errorf("the peer's Follow %s is not %s: %+v", followID, state, fs)
	})
}

// waitReceived waits until the peer's inboxes accepted (202) the activity id
// and returns every POST of it, oldest first.
func waitReceived(t *testing.T, p *Peer, id string) []Received {
	t.Helper()
	return waitReceivedWithin(t, p, id, deliveryDeadline)
}

func waitReceivedWithin(t *testing.T, p *Peer, id string, timeout time.Duration) []Received {
	t.Helper()
	var got []Received
	Eventually(t, timeout, func() error {
		got = p.ReceivedByID(t, id)
		for _, r := range got {
			if r.Status == 202 {
				return nil
			}
		}
		return fmt.Errorf("the peer has not accepted %s yet: %+v", id, got)
	})
	return got
}

// checkVerified checks that the last POST of an activity was answered 202,
// passed Fedify's signature check, came from actor and reached path.
func checkVerified(t *testing.T, got []Received, typ, actor, path string) Received {
	t.Helper()
	r := got[len(got)-1]
	if r.Status != 202 || !r.Verified || r.Type != typ || r.Actor != actor || r.Path != path {
		t.Errorf("%s %s: status %d verified %v type %q actor %q path %q (unverified: %v); want 202, verified, %s from %s at %s",
			typ, r.ID, r.Status, r.Verified, r.Type, r.Actor, r.Path, r.Unverified, typ, actor, path)
	}
	return r
}

// waitReport waits until the delivery report of activity has no pending or
// retrying target and returns it.
func waitReport(t *testing.T, h *Herald, name, activity string) DeliveryReport {
	t.Helper()
	var rep DeliveryReport
	Eventually(t, deliveryDeadline, func() error {
		rep = h.Deliveries(t, name, activity)
		if len(rep.Targets) == 0 || rep.Counts["pending"]+rep.Counts["retrying"] > 0 {
			return fmt.Errorf("deliveries of %s not settled: %+v", activity, rep)
		}
		return nil
	})
	return rep
}

func objectOf(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var a struct {
		Object any `json:"object"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("activity %s: %v", raw, err)
	}
	switch o := a.Object.(type) {
	case map[string]any:
		return o
	case string:
		return map[string]any{"id": o}
	}
	return nil
}

// Scenario 2: alice publishes through the C2S outbox; her follower on the
// Fedify peer receives the Create, the Update and the Delete, each with a
// signature Fedify verified, at its shared inbox.
func TestHeraldPostReachesFedify(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	followAccepted(t, h, p, "alice")

	createID, stored := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "Hello from Herald"})
	noteID, _ := stored["object"].(map[string]any)["id"].(string)
	if noteID == "" {
		t.Fatalf("the stored Create has no object id: %v", stored)
	}
	r := checkVerified(t, waitReceived(t, p, createID), "Create", alice, "/inbox")
	if o := objectOf(t, r.Activity); o["id"] != noteID || !strings.Contains(fmt.Sprint(o["content"]), "Hello from Herald") {
		t.Errorf("the Create the peer received carries %v, want note %s", o, noteID)
	}

	updateID, _ := h.Publish(t, "alice", map[string]any{
		"type":   "Update",
		"object": map[string]any{"id": noteID, "content": "Hello again, edited"},
	})
	r = checkVerified(t, waitReceived(t, p, updateID), "Update", alice, "/inbox")
	if o := objectOf(t, r.Activity); o["id"] != noteID || !strings.Contains(fmt.Sprint(o["content"]), "edited") {
		t.Errorf("the Update the peer received carries %v, want the edited note %s", o, noteID)
	}

	deleteID, _ := h.Publish(t, "alice", map[string]any{"type": "Delete", "object": noteID})
	r = checkVerified(t, waitReceived(t, p, deleteID), "Delete", alice, "/inbox")
	if o := objectOf(t, r.Activity); o["id"] != noteID {
		t.Errorf("the Delete the peer received is of %v, want %s", o, noteID)
	}

	// One knock each. The Accept of the Follow went out with draft-cavage,
	// so the Create asks with RFC 9421 (RSA) once; Fedify took it, so the
	// Update and the Delete are signed with alice's Ed25519 key, and
	// Fedify verified those too.
	for i, id := range []string{createID, updateID, deleteID} {
		got := p.ReceivedByID(t, id)
		if len(got) != 1 || got[0].Scheme != "rfc9421" {
			t.Errorf("%s reached the peer %d times (%+v), want once, RFC 9421", id, len(got), got)
			continue
		}
		if ed := strings.Contains(got[0].Headers["signature-input"], `alg="ed25519"`); ed != (i > 0) {
			t.Errorf("%s: Signature-Input %q: Ed25519 %v, want %v", id, got[0].Headers["signature-input"], ed, i > 0)
		}
		rep := waitReport(t, h, "alice", id)
		if len(rep.Targets) != 1 || rep.Targets[0].Inbox != p.URL+"/inbox" || rep.Targets[0].State != "delivered" || rep.Targets[0].Attempts != 1 {
			t.Errorf("delivery report of %s: %+v, want delivered to %s/inbox in 1 attempt", id, rep, p.URL)
		}
	}
}

// TestFedifyVerifiesHeraldEd25519: a host that verified Herald's RFC 9421
// signature is sent the next delivery signed with the actor's Ed25519 key
// (FEP-521a; keyid its CryptographicKey document, alg="ed25519"), and
// Fedify fetches that key and verifies it on the first knock. A peer that
// refuses RFC 9421 never gets an Ed25519 signature.
func TestFedifyVerifiesHeraldEd25519(t *testing.T) {
	for _, tc := range []struct {
		name    string
		schemes []string // what the peer's inbox lets through
		want    []string // how the three Creates are signed
	}{
		{"fedify", nil, []string{"rfc9421", "ed25519", "ed25519"}},
		{"cavage-only", []string{"draft-cavage"}, []string{"draft-cavage", "draft-cavage", "draft-cavage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := setup(t, PeerOptions{})
			alice := h.ActorID("alice")
			followAccepted(t, h, p, "alice") // the Accept: draft-cavage, the first knock
			if tc.schemes != nil {
				p.AcceptSchemes(t, tc.schemes...)
			}
			for i, want := range tc.want {
				id, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": fmt.Sprintf("note %d", i)})
				got := waitReceived(t, p, id)
				r := checkVerified(t, got, "Create", alice, "/inbox")
				input := r.Headers["signature-input"]
				kind := r.Scheme
				if strings.Contains(input, `alg="ed25519"`) {
					kind = "ed25519"
					if !strings.Contains(input, `keyid="`+alice+`/ed25519-key"`) {
						t.Errorf("Create %d: Signature-Input %q: want keyid %s/ed25519-key", i+1, input, alice)
					}
				}
				if kind != want {
					t.Errorf("Create %d: accepted with %s (%q), want %s", i+1, kind, input, want)
				}
				for _, k := range got {
					if strings.Contains(k.Headers["signature-input"], "ed25519") && tc.schemes != nil {
						t.Errorf("Create %d: the cavage-only peer was sent an Ed25519 signature", i+1)
					}
				}
			}
		})
	}
}

// Scenario 5, retries: the peer answers two 503s (no Retry-After); Herald,
// with retry delays scaled down 100x, retries twice and delivers on the
// third attempt, and its delivery report says so.
func TestHeraldRetriesOn503(t *testing.T) {
	// Mostly waiting on Herald (see README, "Known Herald bugs": retries
	// wait for the scheduler's 2 s idle wake-up): run beside the other
	// waiting test.
	t.Parallel()
	RequirePeer(t)
	p := StartPeer(t, PeerOptions{})
	h := StartHeraldWith(t, HeraldOptions{Actors: []string{"alice"}, RetryScale: "0.01"})
	followAccepted(t, h, p, "alice")

	p.Respond(t, 503, 2, nil)
	createID, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "Third time lucky"})
	got := waitReceivedWithin(t, p, createID, retryDeadline)
	if len(got) != 3 || got[0].Status != 503 || got[1].Status != 503 || !got[0].Forced || !got[1].Forced {
		t.Fatalf("the peer got %s %d times: %+v, want 503, 503, 202", createID, len(got), got)
	}
	checkVerified(t, got, "Create", h.ActorID("alice"), "/inbox")

	rep := waitReport(t, h, "alice", createID)
	if len(rep.Targets) != 1 || rep.Targets[0].State != "delivered" || rep.Targets[0].Attempts != 3 {
		t.Errorf("delivery report: %+v, want delivered in 3 attempts", rep)
	}
	// The operator's view of the same report.
	out := h.CLI(t, "deliveries", createID)
	found := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == p.URL+"/inbox" {
			found = f[1] == "delivered" && f[3] == "3"
		}
	}
	if !found {
		t.Errorf("herald deliveries %s does not show %s/inbox delivered in 3 attempts:\n%s", createID, p.URL, out)
	}
	noVerifyFailures(t, h)
}

// Scenario 5, gone: a 410 from the peer's shared inbox removes nobody; a
// 410 from its personal inbox (Herald's Accept of a repeated Follow goes
// there) removes the peer from alice's followers.
func TestHeraldDropsFollowerOn410(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	followAccepted(t, h, p, "alice")
	followers := func() int {
		return storetest.Count(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.Follower == p.ActorID })
	}

	// A post goes to followers through their shared inbox.
	p.Respond(t, 410, 1, nil)
	createID, _ := h.Publish(t, "alice", map[string]any{"type": "Note", "content": "to a shared inbox that says Gone"})
	rep := waitReport(t, h, "alice", createID)
	if len(rep.Targets) != 1 || rep.Targets[0].Inbox != p.URL+"/inbox" || rep.Targets[0].State != "failed" || rep.Targets[0].LastStatus != 410 {
		t.Fatalf("delivery report: %+v, want failed with 410 at %s/inbox", rep, p.URL)
	}
	if n := followers(); n != 1 {
		t.Fatalf("%d follower rows after a 410 from the shared inbox, want 1", n)
	}

	// A repeated Follow is answered with another Accept, to the personal
	// inbox, which now says Gone.
	p.Respond(t, 410, 1, nil)
	again := p.Follow(t, h.ActorID("alice"))
	Eventually(t, deliveryDeadline, func() error {
		if n := followers(); n != 0 {
			return fmt.Errorf("%d follower rows, want 0 after the personal inbox answered 410", n)
		}
		return nil
	})
	var got []Received
	for _, r := range p.Received(t) {
		if r.Type == "Accept" && strings.Contains(string(r.Activity), again.FollowID) {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].Status != 410 || got[0].Path != "/users/peer/inbox" {
		t.Errorf("Accepts of the repeated Follow the peer got: %+v, want one, answered 410 at the personal inbox", got)
	}
	var last *storetest.Sent
	for _, d := range storetest.Deliveries(t, h.DB(t)) { // by id: the last one is the latest
		if d.Activity.Type == "Accept" && d.Inbox == p.Inbox {
			last = &d
		}
	}
	if last == nil || last.State != "failed" || last.LastStatus != 410 {
		t.Errorf("the last Accept delivery to %s: %+v, want failed 410", p.Inbox, last)
	}
}

// Scenario 4: alice follows the peer through the C2S outbox; Fedify accepts;
// Herald marks the follow accepted. An Undo through the outbox removes it
// here and reaches the peer, which drops alice from its followers.
//
// Two shapes of Accept: "plain" embeds the Follow with actor and object as
// ids (Mastodon's shape); "embed-actor" embeds the Follow after Fedify
// fetched its actor, so alice's whole actor document rides along, compacted
// by Fedify with prefixed keys ("as:manuallyApprovesFollowers"). The second
// is what Fedify's tutorial code sends.
func TestHeraldFollowsFedify(t *testing.T) {
	for _, style := range []string{"plain", "embed-actor"} {
		t.Run(style, func(t *testing.T) {
			h, p := setup(t, PeerOptions{})
			p.AcceptStyle(t, style)
			alice := h.ActorID("alice")

			followID, _ := h.Publish(t, "alice", map[string]any{"type": "Follow", "object": p.ActorID})
			followingState := func() string {
				g, ok := storetest.First(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == p.ActorID })
				if !ok {
					return "no follow"
				}
				return g.State
			}
			var refused *Outgoing
			Eventually(t, deliveryDeadline, func() error {
				if s := followingState(); s == "accepted" {
					return nil
				}
				for _, o := range p.PostsTo(t, alice+"/inbox") {
					if o.Status == 400 {
						refused = &o
						return nil
					}
				}
				return fmt.Errorf("alice's follow of the peer is %q, want accepted", followingState())
			})
			if refused != nil {
				t.Fatalf("Herald refused the peer's Accept (%s): 400 %s", refused.Scheme, refused.Body)
			}
			checkVerified(t, p.ReceivedByID(t, followID), "Follow", alice, "/users/peer/inbox")
			if fs := p.Followers(t); len(fs) != 1 || fs[0].ID != alice || fs[0].FollowID != followID {
				t.Errorf("the peer's followers: %+v, want alice with Follow %s", fs, followID)
			}
			if out := h.CLI(t, "following", "--as", "alice"); !strings.Contains(out, p.ActorID) || !strings.Contains(out, "accepted") {
				t.Errorf("herald following --as alice:\n%s\nwant %s accepted", out, p.ActorID)
			}
			// Fedify's Accept passed Herald's verifier on the first knock.
			onePost(t, p, alice+"/inbox", "rfc9421")
			noVerifyFailures(t, h)

			undoID, _ := h.Publish(t, "alice", map[string]any{"type": "Undo", "object": followID})
			if n := storetest.Count(t, h.DB(t).AllFollowing, nil); n != 0 {
				t.Errorf("%d following rows after the Undo, want 0", n)
			}
			checkVerified(t, waitReceived(t, p, undoID), "Undo", alice, "/users/peer/inbox")
			if fs := p.Followers(t); len(fs) != 0 {
				t.Errorf("the peer still has followers after the Undo: %+v", fs)
			}
			if out := h.CLI(t, "following", "--as", "alice"); strings.Contains(out, p.ActorID) {
				t.Errorf("herald following --as alice still lists the peer:\n%s", out)
			}
		})
	}
}

// Scenario 7: an actor that approves followers by hand leaves the peer's
// Follow pending (nothing is queued to the peer) until `herald follows
// approve`; then the Accept reaches the peer and Fedify accepts it.
func TestManualApprovalKeepsFollowPending(t *testing.T) {
	// Mostly waiting for serve's scheduler to pick up the CLI's Accept: run
	// beside the other waiting test.
	t.Parallel()
	RequirePeer(t)
	p := StartPeer(t, PeerOptions{})
	h := StartHeraldWith(t, HeraldOptions{ManualApproval: []string{"carol"}})
	carol := h.ActorID("carol")

	sent := p.Follow(t, carol)
	// Herald commits before it answers the Follow, so this is its settled
	// state, not a moment in a race.
	onePost(t, p, carol+"/inbox", "rfc9421")
	peerFollower := func() string {
		f, ok := storetest.First(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.Follower == p.ActorID })
		if !ok {
			return "no row"
		}
		return f.State
	}
	if state := peerFollower(); state != "pending" {
		t.Fatalf("carol's follower row for the peer: state %q, want pending", state)
	}
	if n := storetest.Count(t, h.DB(t).AllDeliveries, nil); n != 0 {
		t.Fatalf("%d deliveries queued before approval, want none", n)
	}
	if out := h.CLI(t, "follows", "pending", "carol"); !strings.Contains(out, p.ActorID) {
		t.Errorf("herald follows pending carol does not list the peer:\n%s", out)
	}
	for _, f := range p.Following(t) {
		if f.State != "pending" {
			t.Errorf("the peer's Follow is %s before approval, want pending", f.State)
		}
	}

	h.CLI(t, "follows", "approve", "carol", p.ActorID)
	if state := peerFollower(); state != "accepted" {
		t.Errorf("carol's follower row after approval: state %q, want accepted", state)
	}
	// The CLI only queues the Accept; serve sends it when it next wakes.
	waitPeerFollow(t, p, sent.FollowID, "accepted", cliDeliveryDeadline)
	var accepts []Received
	for _, r := range p.Received(t) {
		if r.Type == "Accept" {
			accepts = append(accepts, r)
		}
	}
	if len(accepts) != 1 {
		t.Fatalf("the peer got %d Accepts, want 1: %+v", len(accepts), accepts)
	}
	r := checkVerified(t, accepts, "Accept", carol, "/users/peer/inbox")
	if o := objectOf(t, r.Activity); o["id"] != sent.FollowID {
		t.Errorf("the Accept is of %v, want the peer's Follow %s", o, sent.FollowID)
	}
	noVerifyFailures(t, h)
}

// The bug the first interop run found: the peer follows alice (and alice
// the peer), then sends an Update of its own actor, which empties Herald's
// cache of it, then a Delete of its own actor. Herald used to drop that
// Delete as from an actor it never knew, keeping both follows; now it
// applies it.
func TestFedifySelfDeleteAfterUpdate(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")

	followAccepted(t, h, p, "alice")
	p.AcceptStyle(t, "plain") // see TestHeraldFollowsFedify/embed-actor
	h.Publish(t, "alice", map[string]any{"type": "Follow", "object": p.ActorID})
	Eventually(t, deliveryDeadline, func() error {
		if n := storetest.Count(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == p.ActorID && g.State == store.StateAccepted }); n != 1 {
			return fmt.Errorf("alice's follow of the peer is not accepted yet")
		}
		return nil
	})
	cached := func() int { return storetest.Found(h.DB(t).RemoteActorByID(context.Background(), p.ActorID)) }
	if cached() != 1 {
		t.Fatalf("Herald has not cached the peer's actor")
	}

	p.Send(t, alice, map[string]any{"type": "Update", "object": p.ActorID, "to": alice})
	if cached() != 0 {
		t.Fatalf("the peer's actor is still cached after its Update")
	}
	p.Send(t, alice, map[string]any{"type": "Delete", "object": p.ActorID, "to": alice})

	posts := p.PostsTo(t, alice+"/inbox")
	for _, o := range posts {
		if o.Status != 202 {
			t.Errorf("POST %s answered %d, want 202", o.URL, o.Status)
		}
	}
	if n := h.MetricSeries(t, "federation_inbox_dropped_total", `reason="unknown_delete"`); n != 0 {
		t.Errorf("Herald dropped the self-Delete as unknown_delete (%v)", n)
	}
	if n := storetest.Count(t, h.DB(t).AllFollowers, func(f store.Follower) bool { return f.Follower == p.ActorID }); n != 0 {
		t.Errorf("%d follower rows for the deleted peer, want 0", n)
	}
	if n := storetest.Count(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == p.ActorID }); n != 0 {
		t.Errorf("%d following rows for the deleted peer, want 0", n)
	}
	if cached() != 0 {
		t.Errorf("the deleted peer's actor is cached again")
	}
	noVerifyFailures(t, h)
}

// Herald's reactions: alice likes and boosts a note of the peer's; Fedify
// verifies both, the Like at the author's inbox, the Announce through the
// shared inbox (alice's followers and the author); an Undo of the Like
// follows it there.
func TestHeraldReactionsReachFedify(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	followAccepted(t, h, p, "alice")
	note := map[string]any{"id": p.ActorID + "/notes/reacted", "type": "Note", "attributedTo": p.ActorID}

	likeID, _ := h.Publish(t, "alice", map[string]any{"type": "Like", "object": note})
	got := waitReceived(t, p, likeID)
	r := checkVerified(t, got, "Like", alice, got[len(got)-1].Path)
	if r.Path != "/inbox" && r.Path != "/users/peer/inbox" {
		t.Errorf("the Like reached %s", r.Path)
	}

	announceID, _ := h.Publish(t, "alice", map[string]any{"type": "Announce", "object": note})
	got = waitReceived(t, p, announceID)
	checkVerified(t, got, "Announce", alice, got[len(got)-1].Path)
	if n := len(p.ReceivedByID(t, announceID)); n != 1 {
		t.Errorf("the Announce reached the peer %d times, want once (one shared inbox)", n)
	}

	undoID, _ := h.Publish(t, "alice", map[string]any{"type": "Undo", "object": likeID})
	got = waitReceived(t, p, undoID)
	r = checkVerified(t, got, "Undo", alice, got[len(got)-1].Path)
	if o := objectOf(t, r.Activity); o["id"] != likeID || o["type"] != "Like" {
		t.Errorf("the Undo carries %v, want the Like %s", o, likeID)
	}
}
