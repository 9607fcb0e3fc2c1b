package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestRelaySubscriptions: a relay is subscribed to once; only its host
// answers, by the Follow's id or as the pending Follow to that host; a
// rejected relay may be asked again, with a new Follow, and only accepted
// relays get public posts.
func TestRelaySubscriptions(t *testing.T) { pgtest.Each(t, testRelaySubscriptions) }

func testRelaySubscriptions(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Now()
	write := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := db.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	add := func(followID string) error {
		return db.Write(ctx, func(tx *store.Tx) error {
			return tx.AddRelay(ctx, &store.Relay{URL: "https://relay.example/inbox", Style: store.RelayMastodon,
				Inbox: "https://relay.example/inbox", FollowID: followID}, now)
		})
	}
	answer := func(followID, actor, host string, accept bool) (matched bool) {
		write(func(tx *store.Tx) (err error) {
			matched, err = tx.AnswerRelay(ctx, followID, actor, host, accept, now)
			return err
		})
		return matched
	}
	inboxes := func() (out []string) {
		write(func(tx *store.Tx) (err error) { out, err = tx.RelayInboxes(ctx); return err })
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

// TestRelayFeedAndMoves: what the two migrations of relays and moves added
// holds on each engine: an item in the relay feed is counted there and
// found as held, once; a job of the instance actor names no actor; an
// actor's aliases and where it moved come back as written.
func TestRelayFeedAndMoves(t *testing.T) { pgtest.Each(t, testRelayFeedAndMoves) }

func testRelayFeedAndMoves(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Now()
	const post, author = "https://a.example/notes/1", "https://a.example/users/ann"
	var held bool
	err := db.Write(ctx, func(tx *store.Tx) error {
		id, err := tx.AddInboxItem(ctx, store.InboxItem{IRI: post + "/activity", Type: "Create", Actor: author, Object: post, Body: "{}", ReceivedAt: now}, nil)
		if err != nil {
			return err
		}
		if err := tx.MarkRelayed(ctx, id); err != nil {
			return err
		}
		if held, err = tx.RelayedObject(ctx, post); err != nil || !held {
			return fmt.Errorf("relayed object not held: %v", err)
		}
		held, err = tx.RelayHolds(ctx, post, author)
		return err
	})
	if err != nil || !held {
		t.Fatalf("relay feed: held %v, %v", held, err)
	}
	if n, err := db.InboxCount(ctx, store.RelayFeed, false); err != nil || n != 1 {
		t.Errorf("relay feed counts %d (%v), want 1", n, err)
	}
	if items, err := db.InboxPage(ctx, store.RelayFeed, 0, 0, 10, false); err != nil || len(items) != 1 || items[0].Object != post {
		t.Errorf("relay feed page %+v (%v)", items, err)
	}
	id, err := db.AddJob(ctx, "relay-add", 0, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if j, err := db.JobByID(ctx, id); err != nil || j.ActorID != 0 {
		t.Errorf("instance actor's job: %+v %v", j, err)
	}
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		if err := tx.SetAliases(ctx, alice.ID, []string{"https://b.example/users/al"}); err != nil {
			return err
		}
		return tx.SetMovedTo(ctx, alice.ID, "https://b.example/users/al")
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := db.ActorByName(ctx, "alice"); err != nil || len(a.AlsoKnownAs) != 1 || a.MovedTo != "https://b.example/users/al" {
		t.Errorf("moved actor %+v %v", a, err)
	}
}

// TestRelayFeedOncePerObjectAcrossNodes: two handles (two nodes on
// PostgreSQL) receiving the same posts through two relays at the same
// moment put each in the feed once.
func TestRelayFeedOncePerObjectAcrossNodes(t *testing.T) {
	pgtest.Each(t, testRelayFeedOncePerObjectAcrossNodes)
}

func testRelayFeedOncePerObjectAcrossNodes(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	dbs := openTwice(t, engine)
	const posts = 20
	var wg sync.WaitGroup
	for n, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range posts {
				post := fmt.Sprintf("https://a.example/notes/%d", i)
				err := db.Write(ctx, func(tx *store.Tx) error {
					held, err := tx.RelayedObject(ctx, post)
					if err != nil || held {
						return err
					}
					id, err := tx.AddInboxItem(ctx, store.InboxItem{IRI: fmt.Sprintf("https://relay%d.example/%d", n, i), Type: "Announce",
						Actor: "https://a.example/users/ann", Object: post, Body: "{}", ReceivedAt: time.Now()}, nil)
					if err != nil {
						return err
					}
					return tx.MarkRelayed(ctx, id)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var rows, objects int
	if err := dbs[0].QueryRowContext(ctx, `SELECT count(*), count(DISTINCT object) FROM inbox_items WHERE relayed`).Scan(&rows, &objects); err != nil {
		t.Fatal(err)
	}
	if rows != posts || objects != posts {
		t.Errorf("relay feed holds %d items of %d posts, want %d of %d", rows, objects, posts, posts)
	}
}
