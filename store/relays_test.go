package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"herald/store"
)

// TestRelaySubscriptions: a relay is subscribed to once; only its host
// answers, by the Follow's id or as the pending Follow to that host; a
// rejected relay may be asked again, with a new Follow, and only accepted
// relays get public posts.
func TestRelaySubscriptions(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "h.db"))
	now := time.Now()
	write := func(fn func(tx *sql.Tx) error) {
		t.Helper()
		if err := db.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	add := func(followID string) error {
		return db.Write(ctx, func(tx *sql.Tx) error {
			return store.AddRelay(ctx, tx, &store.Relay{URL: "https://relay.example/inbox", Style: store.RelayMastodon,
				Inbox: "https://relay.example/inbox", FollowID: followID}, now)
		})
	}
	answer := func(followID, actor, host string, accept bool) (matched bool) {
		write(func(tx *sql.Tx) (err error) {
			matched, err = store.AnswerRelay(ctx, tx, followID, actor, host, accept, now)
			return err
		})
		return matched
	}
	inboxes := func() (out []string) {
		write(func(tx *sql.Tx) (err error) { out, err = store.RelayInboxes(ctx, tx); return err })
		return out
	}
	if err := add("https://h.example/actor/activities/1"); err != nil {
		t.Fatal(err)
	}
	if err := add("https://h.example/actor/activities/2"); !errors.Is(err, store.ErrExists) {
		t.Errorf("a second subscription: %v", err)
	}
	if answer("https://h.example/actor/activities/1", "https://other.example/actor", "other.example", true) {
		t.Error("another host answered for the relay")
	}
	if len(inboxes()) != 0 {
		t.Error("a pending relay gets posts")
	}
	if !answer("", "https://relay.example/actor", "relay.example", false) {
		t.Fatal("the relay's Reject naming no Follow did not match")
	}
	if r, _ := db.RelayByURL(ctx, "https://relay.example/inbox"); r.State != store.RelayRejected || r.Actor != "https://relay.example/actor" {
		t.Errorf("after the Reject: %+v", r)
	}
	if err := add("https://h.example/actor/activities/3"); err != nil {
		t.Fatalf("asking a rejected relay again: %v", err)
	}
	if answer("https://h.example/actor/activities/1", "https://relay.example/actor", "relay.example", true) {
		t.Error("the first, replaced Follow was accepted")
	}
	if !answer("https://h.example/actor/activities/3", "https://relay.example/actor", "relay.example", true) {
		t.Fatal("the relay's Accept did not match")
	}
	if got := inboxes(); len(got) != 1 || got[0] != "https://relay.example/inbox" {
		t.Errorf("relay inboxes %v", got)
	}
	if id, err := db.AcceptedRelay(ctx, "https://relay.example/actor"); err != nil || id == 0 {
		t.Errorf("AcceptedRelay: %d %v", id, err)
	}
}
