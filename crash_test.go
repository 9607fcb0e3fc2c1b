package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	var mu sync.Mutex
	arrived := map[string]int{} // "activity inbox" -> count
	total := 0
	var inboxes []string
	for i := 0; i < hosts; i++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.6.%d:0", i+1))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var act struct{ ID string }
			json.Unmarshal(body, &act)
			time.Sleep(15 * time.Millisecond)
			mu.Lock()
			arrived[act.ID+" "+"http://"+r.Host+r.URL.Path]++
			total++
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		}))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		t.Cleanup(srv.Close)
		inboxes = append(inboxes, srv.URL+"/inbox")
	}

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
	err = db.Write(ctx, func(tx *sql.Tx) error {
		for i := 0; i < activities; i++ {
			id := fmt.Sprintf("http://localhost/users/alice/activities/%d", i)
			ids = append(ids, id)
			body, _ := json.Marshal(map[string]any{"id": id, "type": "Create", "actor": "http://localhost/users/alice"})
			if _, err := store.EnqueueActivity(ctx, tx, store.OutActivity{IRI: id, Type: "Create", ActorID: alice.ID, Body: body}, inboxes, time.Now()); err != nil {
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
	arrivals := func() int {
		mu.Lock()
		defer mu.Unlock()
		return total
	}
	want := hosts * activities
	for _, killAt := range []int{want / 6, want / 2, want * 5 / 6} {
		p := start()
		deadline := time.Now().Add(30 * time.Second)
		for arrivals() < killAt && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		p.kill()
	}
	// A last start delivers the rest, the rows the killed process held
	// included. The deadline is far below the 5-minute lease: without the
	// reclaim at start, this would time out.
	p := start()
	restarted := time.Now()
	deadline := restarted.Add(60 * time.Second)
	for {
		mu.Lock()
		missing := 0
		for _, id := range ids {
			for _, in := range inboxes {
				if arrived[id+" "+in] == 0 {
					missing++
				}
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries never arrived", missing, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Repeats are allowed only for what was in flight at each kill.
	mu.Lock()
	dup := total - want
	mu.Unlock()
	t.Logf("%d deliveries, %d repeated after kills; the last start finished in %v", want, dup, time.Since(restarted).Round(time.Millisecond))
	if !strings.Contains(p.errs.String(), "took back what a stopped process held") {
		t.Errorf("the last start reclaimed nothing: %s", p.errs.String())
	}
	if dup > 3*4*hosts {
		t.Errorf("%d repeats: more than could have been in flight", dup)
	}
}
