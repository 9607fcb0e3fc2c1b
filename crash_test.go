package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"herald/federation"
	"herald/internal/pgtest"
	"herald/store"
)

// TestDeliveriesSurviveKill runs `herald serve` as a real child process with
// a fan-out queued, kills it with SIGKILL at several points while it
// delivers to a loopback inbox farm, restarts it each time at once, and
// checks that every (activity, inbox) pair arrived at least once. The
// lease is the default 5 minutes: the rows a killed process held come back
// because the next process reclaims them at start, not because they
// expire.
func TestDeliveriesSurviveKill(t *testing.T) {
	bin := buildHerald(t)
	const hosts, activities = 30, 6

	// The farm: one server per host on its own loopback address, each slow
	// enough that a kill lands mid-fan-out.
	farm := newInboxFarm(t, hosts, loopback(6), "/inbox", 15*time.Millisecond)
	inboxes := farm.Inboxes

	// The queue, written before the server ever starts.
	dbPath := pgtest.Target(t, pgtest.Engine())
	ctx := context.Background()
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, _ := federation.GenerateKeyPEM()
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	err = db.Write(ctx, func(tx *store.Tx) error {
		for i := 0; i < activities; i++ {
			id := fmt.Sprintf("http://localhost/users/alice/activities/%d", i)
			ids = append(ids, id)
			body, _ := json.Marshal(map[string]any{"id": id, "type": "Create", "actor": "http://localhost/users/alice"})
			if _, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: id, Type: "Create", ActorID: alice.ID, Body: body}, inboxes, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	start := func() *process {
		return startProcess(t, bin, "serve", "--db", dbPath, "--listen", addr, "--allow-private-network")
	}
	want := hosts * activities
	for _, killAt := range []int{want / 6, want / 2, want * 5 / 6} {
		p := start()
		farm.waitArrivals(killAt)
		p.kill()
	}
	// A last start delivers the rest, the rows the killed process held
	// included. The deadline is far below the 5-minute lease: without the
	// reclaim at start, this would time out.
	p := start()
	restarted := time.Now()
	deadline := restarted.Add(60 * time.Second)
	for {
		missing := farm.Missing(ids)
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries never arrived", missing, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Repeats are allowed only for what was in flight at each kill.
	dup := farm.Total() - want
	t.Logf("%d deliveries, %d repeated after kills; the last start finished in %v", want, dup, time.Since(restarted).Round(time.Millisecond))
	// The line is logged once the reclaim committed and comes through a
	// pipe the test copies: it may trail the deliveries.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(p.errs.String(), "took back what a stopped process held"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the last start reclaimed nothing: %s", p.errs.String())
		}
	}
	if dup > 3*4*hosts {
		t.Errorf("%d repeats: more than could have been in flight", dup)
	}
}
