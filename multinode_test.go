package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestNodesShareOnePostgres runs three `herald serve` processes on one
// PostgreSQL database and a farm of 300 loopback hosts, publishes 20
// activities through the three nodes' outboxes, kills one node with
// SIGKILL mid-fan-out and checks that every (activity, inbox) pair
// arrives, that only what the dead node held at the kill arrives twice,
// and that its leases are taken over long before the 5-minute lease
// would have run out.
func TestNodesShareOnePostgres(t *testing.T) {
	url := pgtest.URL(t)
	bin := buildHerald(t)
	const hosts, activities, nodes = 300, 20, 3

	farm := newInboxFarm(t, hosts, loopback(20), "/users/u/inbox", 50*time.Millisecond)
	inboxes := farm.Inboxes

	// The instance, its actor and its 300 followers, before any node runs.
	mustCLI(t, "init", "--db", url, "--domain", "localhost:1", "--scheme", "http")
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	priv, pub, _ := federation.GenerateKeyPEM()
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		for _, in := range inboxes {
			id := in[:len(in)-len("/inbox")]
			if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: id, Inbox: in, State: store.StateAccepted}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	var procs []*process
	for range nodes {
		procs = append(procs, startProcess(t, bin, "serve", "--db", url, "--listen", "127.0.0.1:0", "--allow-private-network"))
	}
	var ids []string
	for i := range activities {
		req, _ := http.NewRequest("POST", "http://"+procs[i%nodes].Addr+"/users/alice/outbox",
			bytes.NewReader([]byte(fmt.Sprintf(`{"type": "Note", "content": "<p>post %d</p>"}`, i))))
		req.Header.Set("Content-Type", "application/activity+json")
		req.Header.Set("Authorization", "Bearer tok")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ ID string }
		json.NewDecoder(res.Body).Decode(&doc)
		res.Body.Close()
		if res.StatusCode != 201 || doc.ID == "" {
			t.Fatalf("publish through node %d: %d", i%nodes, res.StatusCode)
		}
		ids = append(ids, doc.ID)
	}
	want := hosts * activities

	// Mid-fan-out, kill the node that holds the most leases at the moment
	// (at least a batch), noting what it held.
	var victim *process
	var owner string
	farm.waitArrivals(1)
	for deadline := time.Now().Add(30 * time.Second); victim == nil && time.Now().Before(deadline); {
		pid, o, n, err := mostLeases(ctx, db)
		if err == nil && n >= 10 {
			owner = o
			for _, p := range procs {
				if p.cmd.Process.Pid == pid {
					victim = p
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	if victim == nil {
		t.Fatal("no node ever held a batch of leases")
	}
	held := func() int {
		leases, err := db.LeasesByOwner(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return leases[owner]
	}
	victim.kill()
	killed, atKill := time.Now(), farm.Total()
	heldAtKill := held()
	var takenOver time.Duration
	for deadline := killed.Add(2 * time.Minute); ; {
		if takenOver == 0 && held() == 0 {
			takenOver = time.Since(killed)
		}
		missing := farm.Missing(ids)
		if missing == 0 && takenOver > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries never arrived (%d still leased by the dead node)", missing, want, held())
		}
		time.Sleep(50 * time.Millisecond)
	}
	dup := farm.Total() - want
	t.Logf("%d deliveries through %d nodes; killed one after %d had arrived, holding %d leases, taken over %v after the kill (lease 5m); %d delivered twice",
		want, nodes, atKill, heldAtKill, takenOver.Round(100*time.Millisecond), dup)
	if heldAtKill == 0 {
		t.Error("the kill landed when the node held nothing: the takeover went untested")
	}
	if takenOver >= 5*time.Minute {
		t.Errorf("leases taken over after %v: no sooner than their expiry", takenOver)
	}
	if dup > heldAtKill {
		t.Errorf("%d deliveries twice, more than the %d in flight at the kill", dup, heldAtKill)
	}
}

// TestSameActivityToTwoNodes posts each of a remote actor's activities to
// two nodes on one PostgreSQL database at the same moment: each is applied
// once (one inbox item per Create, one follower and one Accept for the
// mostLeases returns the registered process that holds the most leased
// deliveries: its pid, its id and how many.
func mostLeases(ctx context.Context, db *store.DB) (pid int, owner string, n int, err error) {
	leases, err := db.LeasesByOwner(ctx)
	if err != nil {
		return 0, "", 0, err
	}
	procs, err := db.Processes(ctx)
	if err != nil {
		return 0, "", 0, err
	}
	for _, p := range procs {
		if leases[p.ID] > n {
			pid, owner, n = p.PID, p.ID, leases[p.ID]
		}
	}
	return pid, owner, n, nil
}

// Follow), and both nodes answer 202.
func TestSameActivityToTwoNodes(t *testing.T) {
	url := pgtest.URL(t)
	bin := buildHerald(t)
	mustCLI(t, "init", "--db", url, "--domain", "localhost:1", "--scheme", "http")
	mustCLI(t, "actor", "add", "alice", "--db", url)
	a := startProcess(t, bin, "serve", "--db", url, "--listen", "127.0.0.1:0", "--allow-private-network")
	b := startProcess(t, bin, "serve", "--db", url, "--listen", "127.0.0.1:0", "--allow-private-network")
	r := fedtest.NewRemote(t, "127.0.22.1")
	bob := r.Actor(t, "bob")
	alice := "http://localhost:1/users/alice"

	acts := []map[string]any{fedtest.Activity(bob, "Follow", alice)}
	for i := range 10 {
		acts = append(acts, fedtest.Activity(bob, "Create", map[string]any{
			"id": fmt.Sprintf("%s/notes/%d", bob.ID, i), "type": "Note", "attributedTo": bob.ID, "to": []string{alice}, "content": "hi"}))
	}
	for _, act := range acts {
		body, _ := json.Marshal(act)
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i, p := range []*process{a, b} {
			req := fedtest.SignedPost(t, "http://"+p.Addr+"/users/alice/inbox", body, bob, signature.Cavage, time.Now())
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				codes[i] = res.StatusCode
			}()
		}
		wg.Wait()
		if codes[0] != 202 || codes[1] != 202 {
			t.Fatalf("%s: answers %v, want 202 from both", act["type"], codes)
		}
	}
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := storetest.Count(t, db.AllInboxItems, func(i store.InboxItem) bool { return i.Actor == bob.ID && i.Type == "Create" }); n != 10 {
		t.Errorf("%d inbox items for 10 Creates each sent to both nodes", n)
	}
	if n := storetest.Count(t, db.AllFollowers, func(f store.Follower) bool { return f.Follower == bob.ID }); n != 1 {
		t.Errorf("%d follower rows", n)
	}
	if n := storetest.Count(t, db.AllActivities, func(a store.Activity) bool { return a.Type == "Accept" }); n != 1 {
		t.Errorf("%d Accepts for one Follow", n)
	}
}
