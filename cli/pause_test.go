package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"herald/internal/fedtest"
	"herald/store"
)

// addFollowers records each remote actor as an accepted follower of the
// local actor name, as an accepted Follow would, through the database the
// server runs on.
func addFollowers(t *testing.T, path, name string, followers ...*fedtest.RemoteActor) {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, err := db.ActorByName(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		for _, f := range followers {
			if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: a.ID, Follower: f.ID, Inbox: f.Inbox(), State: store.StateAccepted}, db.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCLIPauseAHost: `herald deliveries pause` holds a host's deliveries in
// the running server (no attempt, no retry spent, shown as paused) while
// another host gets its own; `resume` lets them all go.
func TestCLIPauseAHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	serveInProcess(t, path)
	mustCLI(t, "actor", "add", "alice", "--db", path)
	slow, fine := fedtest.NewRemote(t, "127.0.9.21"), fedtest.NewRemote(t, "127.0.9.22")
	addFollowers(t, path, "alice", slow.Actor(t, "bob"), fine.Actor(t, "carol"))

	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"deliveries", "pause", "https://x.example/inbox"}, 2, "invalid host"},
		{[]string{"deliveries", "pause", slow.Host, "--for", "-1h"}, 2, "positive duration"},
		{[]string{"deliveries", "resume", slow.Host}, 1, "not paused"},
		{[]string{"deliveries", "pause", slow.Host, "--for", "6h"}, 0, "paused deliveries to " + slow.Host + " until "},
	} {
		code, out, errOut := runCLI(t, nil, append(c.args, "--db", path)...)
		if code != c.code || !strings.Contains(out+errOut, c.out) {
			t.Errorf("%v: exit %d, %q %q", c.args, code, out, errOut)
		}
	}
	posted := mustCLI(t, "post", "--as", "alice", "Hello", "--db", path)
	if !strings.Contains(posted, "queued for 2 inboxes; the server is sending 1, and 1 waits while its host is paused") {
		t.Errorf("post while a host is paused:\n%s", posted)
	}
	create := lineValue(posted, "Create ")
	waitReceived(t, fine, 1)
	if report := mustCLI(t, "deliveries", create, "--db", path); !strings.Contains(report, "1 paused") || !regexp.MustCompile(regexp.QuoteMeta(slow.URL+"/users/bob/inbox")+` +paused +0`).MatchString(report) {
		t.Errorf("report while paused:\n%s", report)
	}
	if out := mustCLI(t, "deliveries", "--db", path); !strings.Contains(out, slow.Host) || !strings.Contains(out, "HELD") {
		t.Errorf("deliveries lists no pause:\n%s", out)
	}
	if n := slow.Requests.Load(); n != 0 {
		t.Errorf("the paused host got %d requests", n)
	}
	if out := mustCLI(t, "deliveries", "resume", slow.Host, "--db", path); !strings.Contains(out, "1 queued go out now") {
		t.Errorf("resume: %q", out)
	}
	waitReceived(t, slow, 1)
	waitFor(t, func() bool {
		return strings.Contains(mustCLI(t, "deliveries", create, "--db", path), "delivered to 2 of 2 servers")
	})
}
