package server_test

import (
	"strings"
	"testing"

	"herald/internal/fedtest"
)

// TestDropsListOnlyVerifiedSigners: the recent inbox drops (the console's
// inbox page) list what verified signers sent, under the signer's host; a
// request dropped before its signature was checked is counted, and the host
// it claims appears nowhere.
func TestDropsListOnlyVerifiedSigners(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.1.1")
	bob := r.Actor(t, "bob")
	// An unverifiable Delete of an actor Herald never saw, naming a host
	// of the sender's choosing: dropped before anything is fetched.
	claimed := &fedtest.RemoteActor{ID: "http://claimed-by-anyone.example/users/x", Key: bob.Key, PEM: bob.PEM}
	if code, _ := h.Deliver(t, "/inbox", claimed, fedtest.Activity(claimed, "Delete", claimed.ID)); code != 202 {
		t.Fatalf("unknown Delete: %d", code)
	}
	// A verified sender's activity that concerns nobody here.
	if code, _ := h.Deliver(t, "/inbox", bob, fedtest.Activity(bob, "Like", bob.ID+"/statuses/1")); code != 202 {
		t.Fatalf("unaddressed Like: %d", code)
	}
	_, page := h.Do(t, "GET", "/status", "", nil)
	if strings.Contains(page, "claimed-by-anyone") {
		t.Error("the status page names a host an unverified request claimed")
	}
	m := h.Srv.Inbox().Metrics
	if n := m.UnverifiedDrops(); n != 1 {
		t.Errorf("%d unverified drops counted, want 1", n)
	}
	drops := m.RecentDrops()
	if len(drops) != 1 || drops[0].Reason != "unaddressed" || !strings.Contains(drops[0].Host, "127.0.1.1") {
		t.Errorf("the drops listed: %+v, want the verified one under its signer's host", drops)
	}
	if !strings.Contains(h.Metrics(t), `federation_inbox_dropped_total{reason="unknown_delete"} 1`) {
		t.Error("the unverified drop is not in the metrics")
	}
}
