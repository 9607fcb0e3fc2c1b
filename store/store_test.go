package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

func open(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMigrationsIdempotent(t *testing.T) { pgtest.Each(t, testMigrationsIdempotent) }

func testMigrationsIdempotent(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	path := pgtest.Target(t, engine)
	db1, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	first, err := db1.Migrations(ctx)
	if err != nil || len(first) == 0 {
		t.Fatalf("migrations %v %v", first, err)
	}
	if err := db1.CreateActor(ctx, &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}, "tok"); err != nil {
		t.Fatal(err)
	}
	db1.Close()
	// Opening again applies nothing twice and keeps the data.
	db2 := open(t, path)
	second, err := db2.Migrations(ctx)
	if err != nil || len(second) != len(first) {
		t.Fatalf("second open: %v %v", second, err)
	}
	if _, err := db2.ActorByName(ctx, "alice"); err != nil {
		t.Fatalf("data lost: %v", err)
	}
	// Two handles on one file at once (serve plus an admin command) both work.
	db3 := open(t, path)
	if err := db3.CreateActor(ctx, &store.Actor{Name: "bob", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}, "tok2"); err != nil {
		t.Fatal(err)
	}
	if n, err := db2.CountActors(ctx); err != nil || n != 2 {
		t.Fatalf("count %d %v", n, err)
	}
	if engine == store.SQLite {
		var mode string
		if err := db2.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode %q %v", mode, err)
		}
	}
}

func TestActorsAndTokens(t *testing.T) { pgtest.Each(t, testActorsAndTokens) }

func testActorsAndTokens(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	a := &store.Actor{Name: "alice", Type: "Service", DisplayName: "A", Summary: "s", ManualApproval: true, PrivateKeyPEM: "priv", PublicKeyPEM: "pub"}
	if err := db.CreateActor(ctx, a, "t1"); err != nil {
		t.Fatal(err)
	}
	dup := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "other", PublicKeyPEM: "other"}
	if err := db.CreateActor(ctx, dup, "t2"); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate: %v", err)
	}
	got, err := db.ActorByToken(ctx, "t1")
	if err != nil || got.Name != "alice" || got.Type != "Service" || !got.ManualApproval || got.PrivateKeyPEM != "priv" {
		t.Fatalf("by token: %+v %v", got, err)
	}
	if _, err := db.ActorByToken(ctx, "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the duplicate's token works: %v", err)
	}
	if err := db.SetActorToken(ctx, "alice", "t3"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ActorByToken(ctx, "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Error("old token still works")
	}
	if _, err := db.ActorByToken(ctx, "t3"); err != nil {
		t.Error("new token does not work")
	}
	if _, err := db.ActorByToken(ctx, ""); !errors.Is(err, store.ErrNotFound) {
		t.Error("empty token matched")
	}
	if err := db.SetActorToken(ctx, "nobody", "t4"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("token for unknown actor: %v", err)
	}
}

func TestInstanceActorKeyCreatedOnce(t *testing.T) { pgtest.Each(t, testInstanceActorKeyCreatedOnce) }

func testInstanceActorKeyCreatedOnce(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	calls := 0
	gen := func() (string, string, error) { calls++; return "priv", "pub", nil }
	k1, err := db.InstanceActorKey(ctx, gen)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := db.InstanceActorKey(ctx, gen)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || k1.PublicKeyPEM != k2.PublicKeyPEM {
		t.Errorf("calls %d, keys %q %q", calls, k1.PublicKeyPEM, k2.PublicKeyPEM)
	}
}

func TestSweepProcessed(t *testing.T) { pgtest.Each(t, testSweepProcessed) }

func testSweepProcessed(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	now := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	err := db.Write(ctx, func(tx *store.Tx) error {
		for i, age := range []time.Duration{31 * 24 * time.Hour, 29 * 24 * time.Hour} {
			if _, err := tx.MarkProcessed(ctx, fmt.Sprint("id", i), now.Add(-age)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := db.SweepProcessed(ctx)
	if err != nil || n != 1 {
		t.Fatalf("swept %d %v", n, err)
	}
	// The younger id still blocks a replay.
	err = db.Write(ctx, func(tx *store.Tx) error {
		fresh, err := tx.MarkProcessed(ctx, "id1", now)
		if fresh {
			t.Error("a 29-day-old id was forgotten")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEnqueueQueuesEachInboxOnce: the store queues what it is given, each
// inbox once; judging the inboxes by the federation policy is the
// caller's (outbox/delivery, TestEnqueueSkips).
func TestEnqueueQueuesEachInboxOnce(t *testing.T) { pgtest.Each(t, testEnqueueQueuesEachInboxOnce) }

func testEnqueueQueuesEachInboxOnce(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	if _, err := db.BlockDomain(ctx, "bad.example", ""); err != nil {
		t.Fatal(err)
	}
	err := db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://h.example/a/1", Type: "Create", Body: []byte("{}")},
			[]string{"https://good.example/inbox", "https://bad.example:8443/inbox", "https://good.example/inbox"}, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := db.DeliveryCounts(ctx)
	if err != nil || counts["queued"] != 2 {
		t.Errorf("queued %v %v, want good.example once and bad.example", counts, err)
	}
}
