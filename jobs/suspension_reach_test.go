package jobs_test

import (
	"net/http"
	"testing"

	"herald/internal/fedtest"
)

// TestSuspensionAnnouncedToReporters: a server whose account reported
// alice (a Flag received), though none of its accounts follows her, gets
// the Update announcing her suspension and the lifting's, as Mastodon's
// AccountReachFinder adds the reporters' inboxes to the followers' (so
// the server that reported her learns what came of it, and of its end);
// a server that neither follows nor reported her gets nothing.
func TestSuspensionAnnouncedToReporters(t *testing.T) {
	w := newSuspensionWorld(t)
	h := w.h
	reporters := fedtest.NewRemote(t, "127.0.31.4")
	mod := reporters.Actor(t, "mod")
	flag := fedtest.Activity(mod, "Flag", nil)
	flag["object"] = []string{h.Inst.ActorID("alice")}
	flag["content"] = "spam"
	if code, body := h.Deliver(t, "/inbox", mod, flag); code != http.StatusAccepted {
		t.Fatalf("flag: %d %s", code, body)
	}
	updates := func() (suspended, whole int) {
		for _, rec := range reporters.Received() {
			if obj, _ := rec.Doc["object"].(map[string]any); rec.Doc["type"] == "Update" && obj["id"] == h.Inst.ActorID("alice") {
				if obj["suspended"] == true {
					suspended++
				} else {
					whole++
				}
			}
		}
		return suspended, whole
	}
	w.suspend(t, false)
	if s, _ := updates(); s != 1 {
		t.Errorf("the reporters' server got %d Updates announcing the suspension, want 1", s)
	}
	w.suspend(t, true)
	if _, whole := updates(); whole != 1 {
		t.Errorf("the reporters' server got %d Updates lifting it, want 1", whole)
	}
	if _, n := w.received("Update", w.mark()); n != 0 {
		t.Errorf("a server that neither follows nor reported alice got %d POSTs", n)
	}
}
