package interop

import (
	"encoding/json"
	"fmt"
	"testing"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestFedifyMovesAHeraldFollow: alice follows the peer; the peer sends a
// Move (Fedify's Move, built by its vocabulary from the JSON) to a new
// account on another server (a fake one on its own loopback address).
// While the new account does not list the peer in alsoKnownAs, Herald
// drops the Move as move_unverified and keeps following the peer; once it
// does, Herald follows the new account (its Follow reaches the fake
// server) and unfollows the peer (Fedify verifies the Undo and forgets
// alice).
func TestFedifyMovesAHeraldFollow(t *testing.T) {
	h, p := setup(t, PeerOptions{})
	alice := h.ActorID("alice")
	followID, _ := h.Publish(t, "alice", map[string]any{"type": "Follow", "object": p.ActorID})
	Eventually(t, deliveryDeadline, func() error {
		if n := storetest.Count(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == p.ActorID && g.State == store.StateAccepted }); n != 1 {
			return fmt.Errorf("alice's follow of the peer is not accepted yet")
		}
		return nil
	})
	next := fedtest.NewRemote(t, "127.0.9.41")
	target := next.Actor(t, "peer")
	move := map[string]any{"type": "Move", "object": p.ActorID, "target": target.ID, "to": []string{p.ActorID + "/followers"}}

	p.Send(t, alice, move)
	Eventually(t, deliveryDeadline, func() error {
		if n := h.MetricSeries(t, "federation_inbox_dropped_total", `reason="move_unverified"`); n != 1 {
			return fmt.Errorf("move_unverified drops: %v", n)
		}
		return nil
	})
	if n := storetest.Count(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == p.ActorID }); n != 1 {
		t.Fatalf("an unverified Move changed alice's follow of the peer")
	}

	next.Alias(target, p.ActorID)
	p.Send(t, alice, move)
	got := waitFollow(t, next)
	if got.Doc["actor"] != alice || got.Doc["object"] != target.ID || got.Path != "/users/peer/inbox" {
		t.Errorf("the new account got %v at %s, want alice's Follow", got.Doc, got.Path)
	}
	Eventually(t, deliveryDeadline, func() error {
		if fs := p.Followers(t); len(fs) != 0 {
			return fmt.Errorf("the peer still has followers %+v", fs)
		}
		return nil
	})
	undos := 0
	for _, r := range p.Received(t) {
		if r.Type == "Undo" && r.Actor == alice && r.Verified {
			undos++
			var undo struct{ Object struct{ ID string } }
			if json.Unmarshal(r.Activity, &undo); undo.Object.ID != followID {
				t.Errorf("the Undo names %q, want alice's Follow %s", undo.Object.ID, followID)
			}
		}
	}
	if undos != 1 {
		t.Errorf("the peer accepted %d Undos from alice, want 1", undos)
	}
	if n := storetest.Count(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == target.ID && g.State == store.StatePending }); n != 1 {
		t.Errorf("alice's follow of the new account is not pending")
	}
	noVerifyFailures(t, h)
}

// waitFollow waits for the first POST to remote.
func waitFollow(t *testing.T, remote *fedtest.Remote) fedtest.Received {
	t.Helper()
	var got []fedtest.Received
	Eventually(t, deliveryDeadline, func() error {
		if got = remote.Received(); len(got) == 0 {
			return fmt.Errorf("nothing reached %s", remote.URL)
		}
		return nil
	})
	return got[0]
}
