package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/store"
)

func TestCLIPublishing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	if code, _, errOut := runCLI(t, nil, "actor", "add", "alice", "--db", path); code != 0 {
		t.Fatal(errOut)
	}
	remote := fedtest.NewRemote(t, "127.0.9.1")
	bob := remote.Actor(t, "bob")
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := db.ActorByName(ctx, "alice")
	err = db.Write(ctx, func(tx *sql.Tx) error {
		_, _, err := store.UpsertFollower(ctx, tx, store.Follower{ActorID: alice.ID, Follower: bob.ID, Inbox: bob.Inbox(), SharedInbox: remote.SharedInbox(), State: store.StateAccepted}, time.Now())
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	net := []string{"--db", path, "--allow-private-network"}
	run := func(args ...string) (int, string) {
		code, out, errOut := runCLI(t, nil, append(args, net...)...)
		return code, out + errOut
	}
	code, out := run("post", "--as", "alice", "Hello <world>")
	if code != 0 || !strings.Contains(out, "Create http://localhost:8080/users/alice/activities/") || !strings.Contains(out, "queued for 1 inboxes") {
		t.Fatalf("post: %d %s", code, out)
	}
	objURL, createURL := "", ""
	for _, l := range strings.Split(out, "\n") {
		if u, ok := strings.CutPrefix(l, "object: "); ok {
			objURL = u
		}
		if u, ok := strings.CutPrefix(l, "Create "); ok {
			createURL = u
		}
	}
	if code, out, _ := runCLI(t, nil, "deliveries", createURL, "--db", path); code != 0 || !strings.Contains(out, "delivered to 0 of 1 servers; 1 pending") || !strings.Contains(out, remote.SharedInbox()) {
		t.Errorf("report: %d %s", code, out)
	}
	if code, out := run("post", "--as", "alice", "--to", "@bob@"+remote.Host, "psst"); code != 0 || !strings.Contains(out, "queued for 1 inboxes") {
		t.Fatalf("direct post: %d %s", code, out)
	}
	if code, out := run("post", "--as", "nobody", "x"); code != 1 || !strings.Contains(out, "no actor") {
		t.Errorf("unknown actor: %d %s", code, out)
	}
	if code, out := run("post", "x"); code != 2 || !strings.Contains(out, "--as") {
		t.Errorf("no --as: %d %s", code, out)
	}
	if code, out := run("delete", objURL); code != 0 || !strings.Contains(out, "Delete ") {
		t.Fatalf("delete: %d %s", code, out)
	}
	if code, out := run("delete", objURL); code != 1 || !strings.Contains(out, "was deleted") {
		t.Errorf("second delete: %d %s", code, out)
	}
	if code, out := run("follow", "--as", "alice", "@bob@"+remote.Host); code != 0 || !strings.Contains(out, "Follow ") {
		t.Fatalf("follow: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, nil, "following", "--as", "alice", "--db", path); code != 0 || !strings.Contains(out, bob.ID) || !strings.Contains(out, "pending") {
		t.Errorf("following: %d %s", code, out)
	}
	if code, out := run("unfollow", "--as", "alice", bob.ID); code != 0 || !strings.Contains(out, "Undo ") {
		t.Fatalf("unfollow: %d %s", code, out)
	}
	if code, out := run("unfollow", "--as", "alice", bob.ID); code != 1 || !strings.Contains(out, "does not follow") {
		t.Errorf("second unfollow: %d %s", code, out)
	}
	code, _, out = runCLI(t, nil, "deliveries", "http://localhost:8080/users/alice/activities/none", "--db", path)
	if code != 1 || !strings.Contains(out, "no activity") {
		t.Errorf("report of nothing: %d %s", code, out)
	}
}
