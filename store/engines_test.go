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

// TestNewerDatabaseRefused: a database that records a migration this binary
// does not know was made by a newer Herald, and opening it changes nothing.
func TestNewerDatabaseRefused(t *testing.T) { pgtest.Each(t, testNewerDatabaseRefused) }

func testNewerDatabaseRefused(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	target := pgtest.Target(t, engine)
	db, err := store.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_from_the_future.sql', 0)`)
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(context.Context, string) (*store.DB, error){store.Open, store.OpenExisting} {
		if db, err := open(ctx, target); !errors.Is(err, store.ErrNewerDatabase) {
			if db != nil {
				db.Close()
			}
			t.Fatalf("opened a newer database: %v", err)
		}
	}
}

// TestClaimsNeverDoubleLease: several handles on one database (on
// PostgreSQL, what several processes are) claim at once until the queue is
// empty; every delivery is leased exactly once.
func TestClaimsNeverDoubleLease(t *testing.T) { pgtest.Each(t, testClaimsNeverDoubleLease) }

func testClaimsNeverDoubleLease(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	dbs := openTwice(t, engine)
	const n = 300
	inboxes := make([]string, n)
	for i := range inboxes {
		inboxes[i] = fmt.Sprintf("https://h%d.example/inbox", i%40)
		if i >= 40 {
			inboxes[i] = fmt.Sprintf("https://h%d.example/users/%d/inbox", i%40, i)
		}
	}
	now := time.Now()
	err := dbs[0].Write(ctx, func(tx *store.Tx) error {
		_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://here.example/a/1", Type: "Create", Body: []byte("{}")}, inboxes, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 6 {
		db := dbs[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := db.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: fmt.Sprint("owner", w), Lane: store.LaneNormal, Limit: 7, Now: now, Lease: time.Minute})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, c := range got {
					seen[c.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("claimed %d distinct deliveries, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("delivery %d leased %d times", id, k)
		}
	}
}

// TestFollowerDigestsRecomputed: a follower added or removed outside Herald
// (a plain sqlite3 or psql shell) leaves the digest stale until the
// recompute, which corrects exactly the digests that differ.
func TestFollowerDigestsRecomputed(t *testing.T) { pgtest.Each(t, testFollowerDigestsRecomputed) }

func testFollowerDigestsRecomputed(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	a, b := "https://a.example", "https://b.example"
	err := db.Write(ctx, func(tx *store.Tx) error {
		for _, id := range []string{a + "/u/1", b + "/u/2"} {
			if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: id, Inbox: id + "/inbox", State: store.StateAccepted}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.RecomputeFollowerDigests(ctx); err != nil || n != 0 {
		t.Fatalf("recompute of current digests corrected %d (%v), want 0", n, err)
	}
	// As a shell would: one more follower on a, and b's only one gone.
	for _, q := range []string{
		`INSERT INTO followers(actor_id, follower, host, origin, inbox, state, created_at) VALUES (1, 'https://a.example/u/3', 'a.example', 'https://a.example', 'https://a.example/u/3/inbox', 'accepted', 0)`,
		`DELETE FROM followers WHERE origin = 'https://b.example'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.RecomputeFollowerDigests(ctx); err != nil || n != 2 {
		t.Fatalf("recompute corrected %d (%v), want 2", n, err)
	}
	for origin, want := range map[string]store.Digest{a: store.DigestOf(a+"/u/1", a+"/u/3"), b: {}} {
		if got, err := db.FollowerDigest(ctx, alice.ID, origin); err != nil || got != want {
			t.Errorf("digest of %s = %s (%v), want %s", origin, got, err, want)
		}
	}
}

// TestConcurrentFollowerChanges: two handles approving and adding
// followers of one origin at once keep the digest equal to the table's
// (on PostgreSQL the digest row is locked before it is read), and each
// approval changes the row for one of them only.
func TestConcurrentFollowerChanges(t *testing.T) { pgtest.Each(t, testConcurrentFollowerChanges) }

func testConcurrentFollowerChanges(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	dbs := openTwice(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := dbs[0].CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	const origin = "https://a.example"
	var wg sync.WaitGroup
	// How many writers each follower's approval changed: one, or an
	// approval would send a second Accept.
	var mu sync.Mutex
	approvals := map[string]int{}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := dbs[w%2]
			for i := range 15 {
				// Each follower is added by two workers and approved by both.
				id := fmt.Sprintf("%s/u/%d", origin, i*2+w/2)
				err := db.Write(ctx, func(tx *store.Tx) error {
					if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: id, Inbox: id + "/inbox", State: store.StatePending}, time.Now()); err != nil {
						return err
					}
					changed, err := tx.SetFollowerState(ctx, alice.ID, id, store.StateAccepted)
					if changed {
						mu.Lock()
						approvals[id]++
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	ids, err := dbs[0].FollowersOnOrigin(ctx, alice.ID, origin)
	if err != nil || len(ids) != 30 {
		t.Fatalf("%d accepted followers (%v), want 30", len(ids), err)
	}
	for _, id := range ids {
		if approvals[id] != 1 {
			t.Errorf("%s approved by %d writers, want 1", id, approvals[id])
		}
	}
	if got, err := dbs[1].FollowerDigest(ctx, alice.ID, origin); err != nil || got != store.DigestOf(ids...) {
		t.Errorf("digest %s (%v), want %s", got, err, store.DigestOf(ids...))
	}
}

// openTwice opens one fresh database through two handles: on PostgreSQL,
// what two processes are.
func openTwice(t *testing.T, engine store.Engine) []*store.DB {
	target := pgtest.Target(t, engine)
	var dbs []*store.DB
	for range 2 {
		db, err := store.Open(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	return dbs
}

// TestIdempotencyKeyRace: two handles storing an activity with one actor
// and Idempotency-Key at the same moment store it once; the loser is told
// so (and its caller replays the winner).
func TestIdempotencyKeyRace(t *testing.T) { pgtest.Each(t, testIdempotencyKeyRace) }

func testIdempotencyKeyRace(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	dbs := openTwice(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := dbs[0].CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		key := fmt.Sprint("key-", round)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, db := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = db.Write(ctx, func(tx *store.Tx) error {
					_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: fmt.Sprintf("https://here.example/a/%d-%d", round, i), Type: "Create",
						ActorID: alice.ID, Body: []byte("{}"), IdempotencyKey: key}, []string{"https://there.example/inbox"}, time.Now())
					return err
				})
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrIdempotencyKeyTaken):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d activities stored for one key", round, won)
		}
	}
}

// TestResumeWakesServers: lifting a pause from another handle (a command,
// or another node's console) wakes the serving process, whose held rows
// are due at once although no delivery row changed: through the pipe on
// SQLite, through LISTEN/NOTIFY on PostgreSQL (the hosts trigger).
func TestResumeWakesServers(t *testing.T) { pgtest.Each(t, testResumeWakesServers) }

func testResumeWakesServers(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	dbs := openTwice(t, engine)
	lock, err := dbs[0].LockServe()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	cmd := dbs[1]
	cmd.NotifyOnCommit()
	if _, err := cmd.PauseHost(ctx, "slow.example", time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Whatever the pause itself woke is passed over.
	for quiet := false; !quiet; {
		select {
		case <-lock.Wakes():
		case <-time.After(300 * time.Millisecond):
			quiet = true
		}
	}
	if _, err := cmd.ResumeHost(ctx, "slow.example"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lock.Wakes():
	case <-time.After(30 * time.Second):
		t.Fatal("the resume woke no server")
	}
}
