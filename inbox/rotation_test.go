package inbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/federation/signature"
	"herald/internal/fedtest"
)

// TestKeyRotationRace (issue 26 item 6): a remote actor rotates its key
// (same key id, new key) and 50 requests signed with the new key arrive at
// once while the old one is cached. Every one is verified with the new
// key: one refetch, the others wait for it; none is refused. 20 rotations,
// one after the other. A 503 (the inbox busy) would be retried by the
// sender, and is here; a 401 would lose the activity.
func TestKeyRotationRace(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.62")
	keys := []*fedtest.RemoteActor{r.Actor(t, "k0"), r.Actor(t, "k1")}
	bob := r.ActorSharingKey("bob", keys[0])
	if code, _ := h.Deliver(t, "/users/alice/inbox", bob, fedtest.Activity(bob, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("follow: %d", code)
	}
	const runs, concurrent = 20, 50
	for run := 1; run <= runs; run++ {
		// Past the refresh interval, so each rotation may be refetched.
		h.Advance(2 * time.Minute)
		bob = r.ActorSharingKey("bob", keys[run%2])
		before := actorFetches(r)
		var wg sync.WaitGroup
		codes := make([]int, concurrent)
		for i := range concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				note := fedtest.Activity(bob, "Create", map[string]any{"id": fmt.Sprintf("%s/notes/%d-%d", bob.ID, run, i), "type": "Note", "content": "new key"})
				note["to"] = h.Inst.ActorID("alice")
				body, _ := json.Marshal(note)
				for try := 0; ; try++ {
					codes[i], _ = h.Send(t, fedtest.SignedPost(t, h.URL+"/users/alice/inbox", body, bob, signature.Cavage, h.Clock()), body)
					if codes[i] != http.StatusServiceUnavailable || try == 20 {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		var refused []string
		for i, c := range codes {
			if c != http.StatusAccepted {
				refused = append(refused, fmt.Sprintf("%d: %d", i, c))
			}
		}
		if len(refused) > 0 {
			t.Fatalf("run %d: %d of %d requests signed with the new key refused (%s)", run, len(refused), concurrent, strings.Join(refused, ", "))
		}
		if n := actorFetches(r) - before; n != 1 {
			t.Fatalf("run %d: %d fetches of the actor, want the one refetch", run, n)
		}
	}
}

// actorFetches counts the GETs of bob's actor document (his key's URL).
func actorFetches(r *fedtest.Remote) int {
	n := 0
	for _, f := range r.Fetches() {
		if f.Path == "/users/bob" {
			n++
		}
	}
	return n
}
