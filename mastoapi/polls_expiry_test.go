package mastoapi_test

import (
	"testing"
	"time"

	"herald/mastoapi"
)

// TestNotificationsReadWritesNothing: listing notifications while no poll
// has ended commits nothing (it once opened a write transaction each
// time); once a poll has ended, the list tells its author, once.
func TestNotificationsReadWritesNothing(t *testing.T) {
	h := newHerald(t)
	tok := logIn(t, h, "read write")
	status(t, h, tok, "POST", "/api/v1/statuses", map[string]any{"status": "Tea or coffee?",
		"poll": map[string]any{"options": []string{"Tea", "Coffee"}, "expires_in": 3600}})
	list := func() []mastoapi.Notification {
		var out []mastoapi.Notification
		api(t, h, tok, "GET", "/api/v1/notifications", nil, &out)
		return out
	}
	list() // the log-in's own writes (the token's last use) settle
	before := h.DB.Commits()
	for range 3 {
		if n := list(); len(n) != 0 {
			t.Fatalf("notifications before the poll ended: %d", len(n))
		}
	}
	if n := h.DB.Commits() - before; n != 0 {
		t.Errorf("three reads of notifications committed %d transactions, want none", n)
	}
	h.Advance(2 * time.Hour)
	if n := list(); len(n) != 1 || n[0].Type != "poll" {
		t.Fatalf("after the poll ended: %+v", n)
	}
	if n := list(); len(n) != 1 {
		t.Errorf("told again: %d notifications", len(n))
	}
}
