package jobs_test

import (
	"net/http"
	"testing"
	"time"
)

// TestSuspensionUpdateStaleAfterLifting: a follower's server that is down
// while alice is suspended and then unsuspended gets, once it is back, the
// lifting's Update of her whole document and not the suspension's, which
// the lifting made stale: retried after it (its backoff is the longer), it
// would have the server take her for suspended again.
func TestSuspensionUpdateStaleAfterLifting(t *testing.T) {
	w := newSuspensionWorld(t)
	h, down := w.h, w.followers[0]
	down.PostStatus.Store(http.StatusServiceUnavailable)
	w.suspend(t, false)
	h.Advance(time.Hour)
	h.Step(t) // a second attempt of the suspension's Update fails too
	w.suspend(t, true)
	down.PostStatus.Store(0)
	mark := w.mark()
	for range 24 {
		h.Advance(2 * time.Hour)
		h.Step(t)
	}
	updates, _ := w.received("Update", mark)
	var full int
	for _, u := range updates[0] {
		obj, _ := u.Doc["object"].(map[string]any)
		if obj["suspended"] == true {
			t.Errorf("the server back up got the suspension's Update after the lifting: %s", u.Body)
		} else {
			full++
		}
	}
	if full != 1 {
		t.Errorf("the server back up got %d Updates of alice's whole document, want 1", full)
	}
}
