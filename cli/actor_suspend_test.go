package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLIActorSuspendWithServer: with a server running, suspending an
// actor names the date it is deleted for good (30 days on) and sends the
// Update that announces it; `herald actor list` shows the date; lifting
// it calls the deletion off and sends the Update of the whole document.
func TestCLIActorSuspendWithServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	serveInProcess(t, path)
	mustCLI(t, "actor", "add", "alice", "--db", path)
	before := time.Now().UTC()
	out := mustCLI(t, "actor", "suspend", "alice", "--reason", "spam", "--db", path)
	m := regexp.MustCompile(`suspended alice; it is deleted for good on (\S+) unless`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "the suspension is announced: Update ") {
		t.Fatalf("suspend: %q", out)
	}
	due, err := time.Parse(time.RFC3339, m[1])
	if err != nil || due.Before(before.Add(30*24*time.Hour-time.Second)) || due.After(time.Now().Add(30*24*time.Hour)) {
		t.Errorf("deletion date %s (%v), want 30 days from now", m[1], err)
	}
	if list := mustCLI(t, "actor", "list", "--db", path); !strings.Contains(list, "suspended, deleted on "+m[1]) {
		t.Errorf("actor list:\n%s", list)
	}
	out = mustCLI(t, "actor", "unsuspend", "alice", "--db", path)
	if !strings.Contains(out, "unsuspended alice; its deletion on "+m[1]+" is called off") || !strings.Contains(out, "the lifting is announced: Update ") {
		t.Errorf("unsuspend: %q", out)
	}
	if list := mustCLI(t, "actor", "list", "--db", path); strings.Contains(list, "suspended") {
		t.Errorf("actor list after the lifting:\n%s", list)
	}
}
