package store_test

import (
	"context"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

func TestLeases(t *testing.T) { pgtest.Each(t, testLeases) }

// testLeases: the queue runner's lease statements, on the followers syncs'
// table (migration 0320) and the jobs': a renewed lease outlives its first
// term, an expired one comes back to the queue, and a reclaim takes back
// what an unregistered owner holds at once and what a registered one
// holds once its heartbeat is older than the limit, never before.
func testLeases(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	if err := db.RegisterProcess(ctx, store.Process{ID: "p1", Hostname: "h", PID: 1, StartedAt: now, HeartbeatAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.RequestFollowersSync(ctx, "https://r.example/users/bob", "https://r.example/s", "d", now, time.Hour)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ClaimFollowersSyncs(ctx, "p1", 10, now, time.Minute); err != nil || len(got) != 1 {
		t.Fatalf("claim: %+v %v", got, err)
	}

	// Renewed to 10 minutes, it does not expire at 5.
	if err := db.RenewLeases(ctx, store.FollowersSyncLeases, "p1", now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ExpireLeases(ctx, store.FollowersSyncLeases, now.Add(5*time.Minute)); err != nil || n != 0 {
		t.Errorf("expired %d at 5 minutes (%v), want 0: the renewal", n, err)
	}
	if n, err := db.ExpireLeases(ctx, store.FollowersSyncLeases, now.Add(11*time.Minute)); err != nil || n != 1 {
		t.Errorf("expired %d at 11 minutes (%v), want 1", n, err)
	}
	if got, err := db.ClaimFollowersSyncs(ctx, "p1", 10, now, time.Minute); err != nil || len(got) != 1 {
		t.Fatalf("claim after the expiry: %+v %v", got, err)
	}

	// A job held by an owner never registered comes back at once; the
	// sync of p1, which beat at now, stays until that beat is too old.
	id, err := db.AddJob(ctx, "relay-add", 0, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if j, err := db.ClaimJob(ctx, "nobody", now, time.Hour); err != nil || j.ID != id {
		t.Fatalf("job claim: %+v %v", j, err)
	}
	got, err := db.ReclaimLeases(ctx, now, now.Add(time.Second))
	if err != nil || got.Total() != 1 || got["jobs"] != 1 {
		t.Errorf("reclaimed %v (%v), want the job only", got, err)
	}
	if got, err := db.ReclaimStale(ctx, now, now.Add(3*time.Second)); err != nil || got.Total() != 0 {
		t.Errorf("reclaimed %v (%v) with p1's beat exactly at the limit, want nothing", got, err)
	}
	if got, err := db.ReclaimStale(ctx, now.Add(time.Millisecond), now.Add(3*time.Second)); err != nil || got["followers_syncs"] != 1 {
		t.Errorf("reclaimed %v (%v) with p1's beat past the limit, want its sync", got, err)
	}
	if procs, _ := db.Processes(ctx); len(procs) != 0 {
		t.Errorf("processes %+v: the stale one is forgotten", procs)
	}
	if got, err := db.ClaimFollowersSyncs(ctx, "p2", 10, now, time.Minute); err != nil || len(got) != 1 {
		t.Errorf("claim after the reclaim: %+v %v", got, err)
	}
}
