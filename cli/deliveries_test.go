package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"herald/internal/fedtest"
)

// TestDeliveriesOldestDue: a delivery waiting for its retry is not due:
// herald deliveries says none is due and when the next one is, in RFC 3339
// and UTC like every time it prints, instead of a time to come under a
// heading that reads as the past.
func TestDeliveriesOldestDue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	serveInProcess(t, path)
	mustCLI(t, "actor", "add", "alice", "--db", path)
	down := fedtest.NewRemote(t, "127.0.9.31")
	down.PostStatus.Store(503)
	addFollowers(t, path, "alice", down.Actor(t, "bob"))
	if out := mustCLI(t, "post", "--as", "alice", "Hello", "--db", path); !strings.Contains(out, "queued for 1 inbox; the server is sending them") {
		t.Errorf("post: %q", out)
	}
	waitReceived(t, down, 1)
	next := regexp.MustCompile(`OLDEST DUE\n1 +0 +0 +0 +none \(next \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\n`)
	var out string
	waitFor(t, func() bool { out = mustCLI(t, "deliveries", "--db", path); return next.MatchString(out) })
}
