package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestFollowerDigestsFollowEveryChange checks that the triggers keep
// follower_digests equal to a digest recomputed from the followers table,
// through every way followers change: follow, approval, Undo, 410, block,
// actor Delete.
func TestFollowerDigestsFollowEveryChange(t *testing.T) {
	pgtest.Each(t, testFollowerDigestsFollowEveryChange)
}

func testFollowerDigestsFollowEveryChange(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	write := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := db.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	follow := func(id, inbox, state string) {
		t.Helper()
		write(func(tx *store.Tx) error {
			_, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: id, Inbox: inbox, State: state}, now)
			return err
		})
	}
	// check compares every origin's stored digest with the accepted
	// followers listed for it.
	check := func(step string, origins ...string) {
		t.Helper()
		for _, o := range origins {
			ids, err := db.FollowersOnOrigin(ctx, alice.ID, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.FollowerDigest(ctx, alice.ID, o)
			if err != nil {
				t.Fatal(err)
			}
			if want := store.DigestOf(ids...); got != want {
				t.Errorf("%s: digest of %s = %s, want %s (%v)", step, o, got, want, ids)
			}
		}
	}
	a, b := "https://a.example", "https://b.example:8443"
	follow(a+"/users/1", a+"/users/1/inbox", store.StateAccepted)
	follow(a+"/users/2", a+"/users/2/inbox", store.StateAccepted)
	follow(b+"/users/3", b+"/users/3/inbox", store.StateAccepted)
	follow(b+"/users/4", b+"/users/4/inbox", store.StatePending)
	follow("https://A.EXAMPLE/users/5", a+"/users/5/inbox", store.StateAccepted) // origin case-folded
	check("follows", a, b)
	if d, _ := db.FollowerDigest(ctx, alice.ID, "https://b.example"); d != (store.Digest{}) {
		t.Errorf("another port shares the digest: %s", d)
	}
	// A repeated Follow changes nothing.
	follow(a+"/users/1", a+"/users/1/inbox2", store.StateAccepted)
	check("repeat", a, b)
	// Approval adds the pending follower.
	write(func(tx *store.Tx) error {
		_, err := tx.SetFollowerState(ctx, alice.ID, b+"/users/4", store.StateAccepted)
		return err
	})
	check("approval", a, b)
	// Undo.
	write(func(tx *store.Tx) error {
		_, err := tx.RemoveFollower(ctx, "", a+"/users/2", alice.ID)
		return err
	})
	check("undo", a, b)
	// 410 from a personal inbox.
	write(func(tx *store.Tx) error { return tx.RemoveFollowersByInbox(ctx, b+"/users/3/inbox") })
	check("gone", a, b)
	// Deleted remote actor.
	write(func(tx *store.Tx) error { _, err := tx.RemoveRelations(ctx, b+"/users/4", 0); return err })
	check("delete", a, b)
	if n := count(t, db, `SELECT count(*) FROM follower_digests WHERE origin = $1`, b); n != 0 {
		t.Errorf("an emptied origin keeps a digest row")
	}
	// Domain block.
	if _, err := db.BlockDomain(ctx, "a.example", ""); err != nil {
		t.Fatal(err)
	}
	check("block", a, b)
	if n := count(t, db, `SELECT count(*) FROM follower_digests`); n != 0 {
		t.Errorf("digest rows left: %d", n)
	}
	// The local actor's deletion takes its digests along.
	follow(a+"/users/9", a+"/users/9/inbox", store.StateAccepted)
	write(func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM actors WHERE id = $1`, alice.ID)
		return err
	})
	if n := count(t, db, `SELECT count(*) FROM follower_digests`); n != 0 {
		t.Errorf("digest rows left after actor deletion: %d", n)
	}
}

func count(t *testing.T, db *store.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFollowersSyncRateLimit(t *testing.T) { pgtest.Each(t, testFollowersSyncRateLimit) }

func testFollowersSyncRateLimit(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Now()
	req := func(at time.Time, digest string) bool {
		t.Helper()
		var queued bool
		if err := db.Write(ctx, func(tx *store.Tx) error {
			var err error
			queued, err = tx.RequestFollowersSync(ctx, "https://r.example/users/bob", "https://r.example/s", digest, at, time.Hour)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return queued
	}
	if !req(now, "d1") {
		t.Fatal("first request not queued")
	}
	// While waiting, a newer header replaces the digest.
	if !req(now.Add(time.Minute), "d2") {
		t.Fatal("waiting job not refreshed")
	}
	jobs, err := db.ClaimFollowersSyncs(ctx, "p1", 10, now, time.Minute)
	if err != nil || len(jobs) != 1 || jobs[0].Digest != "d2" {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	// Leased: nobody else claims it, and it is not due.
	if again, err := db.ClaimFollowersSyncs(ctx, "p2", 10, now, time.Minute); err != nil || len(again) != 0 {
		t.Errorf("claimed twice: %+v %v", again, err)
	}
	if _, ok, err := db.NextFollowersSync(ctx); err != nil || ok {
		t.Errorf("a leased sync is due: %v %v", ok, err)
	}
	if err := db.Write(ctx, func(tx *store.Tx) error {
		return tx.FinishFollowersSync(ctx, jobs[0].RemoteActor, "done", now.Add(2*time.Minute))
	}); err != nil {
		t.Fatal(err)
	}
	if req(now.Add(30*time.Minute), "d3") {
		t.Error("second sync within the hour queued")
	}
	if jobs, _ := db.ClaimFollowersSyncs(ctx, "p2", 10, now.Add(30*time.Minute), time.Minute); len(jobs) != 0 {
		t.Errorf("jobs %+v", jobs)
	}
	if !req(now.Add(61*time.Minute), "d4") {
		t.Error("sync after the hour refused")
	}
	// The sweep leaves waiting jobs alone.
	if n, err := db.SweepFollowersSyncs(ctx, now.Add(2*time.Hour)); err != nil || n != 0 {
		t.Errorf("swept %d %v", n, err)
	}
}
