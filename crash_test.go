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
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"herald/federation"
	"herald/store"
)

// buildHerald compiles the binary once per test run.
func buildHerald(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "herald")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

// TestDeliveriesSurviveKill runs `herald serve` as a real child process with
// a fan-out queued, kills it with SIGKILL at several points while it
// delivers to a loopback inbox farm, restarts it each time, and checks that
// every (activity, inbox) pair arrived at least once.
func TestDeliveriesSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
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
	dbPath := filepath.Join(t.TempDir(), "h.db")
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
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--db", dbPath, "--listen", addr, "--allow-private-network", "--delivery-lease", "1s")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	arrivals := func() int {
		mu.Lock()
		defer mu.Unlock()
		return total
	}
	want := hosts * activities
	for _, killAt := range []int{want / 6, want / 2, want * 5 / 6} {
		cmd := start()
		deadline := time.Now().Add(30 * time.Second)
		for arrivals() < killAt && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	// A last start delivers the rest; the leases of the killed processes
	// expire after a second.
	cmd := start()
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
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
	t.Logf("%d deliveries, %d repeated after kills", want, dup)
	if dup > 3*4*hosts {
		t.Errorf("%d repeats: more than could have been in flight", dup)
	}
}
