package mastoapi_test

import (
	"context"
	"testing"

	"herald/policy"
	"herald/store"
)

// TestTimelinesModerated: a silenced remote account stays out of the
// public timeline but not its followers' home feed; a suspended one and a
// suspended local actor are out of both, and come back when lifted.
func TestTimelinesModerated(t *testing.T) {
	w := newWorld(t, "127.0.28.19")
	h, tok := w.h, w.tok
	ctx := context.Background()
	w.deliver(t, "Create", w.note(w.bob, "m1", "<p>bob's post</p>"))
	status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "alice's post"})
	count := func(path string) int { return len(statuses(t, h, tok, path)) }
	if p, home := count("/api/v1/timelines/public"), count("/api/v1/timelines/home"); p != 2 || home != 2 {
		t.Fatalf("before: public %d, home %d; want 2, 2", p, home)
	}
	bob := w.bob.ID
	rule := func(severity string) {
		t.Helper()
		if _, err := h.DB.SetAccountRule(ctx, store.AccountRule{Account: bob, Severity: severity}); err != nil {
			t.Fatal(err)
		}
	}
	rule(policy.SeveritySilence)
	if p, home := count("/api/v1/timelines/public"), count("/api/v1/timelines/home"); p != 1 || home != 2 {
		t.Errorf("bob silenced: public %d, home %d; want 1, 2", p, home)
	}
	rule(policy.SeveritySuspend)
	if p, home := count("/api/v1/timelines/public"), count("/api/v1/timelines/home"); p != 1 || home != 1 {
		t.Errorf("bob suspended: public %d, home %d; want 1, 1", p, home)
	}
	if err := h.DB.ClearAccountRule(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if _, err := h.DB.SuspendActor(ctx, h.Alice.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if p := count("/api/v1/timelines/public?local=true"); p != 0 {
		t.Errorf("alice suspended: public local %d, want 0", p)
	}
	if p := count("/api/v1/timelines/public"); p != 1 {
		t.Errorf("alice suspended, bob lifted: public %d, want 1", p)
	}
}
