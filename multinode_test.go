package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/host"
	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestNodesShareOnePostgres runs two `herald serve` processes on one
// PostgreSQL database and a farm of 200 loopback hosts, publishes 20
// activities through both nodes' outboxes, and kills one node with SIGKILL
// mid-fan-out, while it provably holds leases: 20 of the hosts hold every
// request open until the test lets them answer, so what the node claimed
// for them cannot finish before the kill. Every (activity, inbox) pair
// must arrive; the other node must take the dead one's leases over within
// 5 s of its last heartbeat (not at the 5-minute lease's expiry); and
// nothing the dead node had finished more than 100 ms before the kill may
// be sent again: a node commits its results as they come, not later.
func TestNodesShareOnePostgres(t *testing.T) {
	url := pgtest.URL(t)
	bin := buildHerald(t)
	const hosts, held, activities, nodes = 200, 20, 20, 2

	farm := newInboxFarm(t, hosts, loopback(20), "/users/u/inbox", 20*time.Millisecond)
	farm.Hold(held)
	released := false
	defer func() {
		if !released {
			farm.Release()
		}
	}()
	heldHosts := map[string]bool{}
	for _, in := range farm.Inboxes[:held] {
		heldHosts[host.AuthorityOf(in)] = true
	}

	// The instance, its actor and its followers, before any node runs.
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
		for _, in := range farm.Inboxes {
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
	ids := publishThrough(t, procs, activities)
	want := hosts * activities

	// Wait until a good part of the fan-out was answered and a node holds
	// deliveries to the held hosts, which it cannot finish; kill that one.
	var victim *process
	var owner string
	waitFor(t, func() bool {
		if farm.Total() < want/4 || farm.Open() == 0 {
			return false
		}
		victim, owner = heldBy(t, db, procs, heldHosts)
		return victim != nil
	})
	killed := time.Now()
	victim.kill()
	atKill := farm.Total()
	defer func() { t.Log(victim.errs.String()) }()
	lastBeat := heartbeatOf(t, db, owner)
	heldAtKill := leasesOf(t, db, owner)

	var takenOver time.Time
	for deadline := killed.Add(time.Minute); takenOver.IsZero(); {
		if leasesOf(t, db, owner) == 0 {
			takenOver = time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leases of the dead node never taken over", leasesOf(t, db, owner))
		}
		time.Sleep(20 * time.Millisecond)
	}
	released = true
	farm.Release()
	for deadline := time.Now().Add(2 * time.Minute); farm.Missing(ids) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries never arrived", farm.Missing(ids), want)
		}
	}

	var late []string
	for key, answered := range farm.Repeated() {
		if answered.Before(killed.Add(-100 * time.Millisecond)) {
			late = append(late, fmt.Sprintf("%s (answered %v before the kill)", key, killed.Sub(answered).Round(time.Millisecond)))
		}
	}
	t.Logf("%d deliveries through %d nodes; killed one after %d had arrived, holding %d leases (%d requests held open); "+
		"taken over %v after its last heartbeat; %d delivered twice, %d of them answered more than 100 ms before the kill",
		want, nodes, atKill, heldAtKill, farm.Open(), takenOver.Sub(lastBeat).Round(10*time.Millisecond), farm.Total()-want, len(late))
	if d := takenOver.Sub(lastBeat); d > 5*time.Second {
		t.Errorf("the dead node's leases were taken over %v after its last heartbeat, want within 5 s", d.Round(10*time.Millisecond))
	}
	if len(late) > 0 {
		slices.Sort(late)
		t.Errorf("%d deliveries answered more than 100 ms before the kill were sent again (results not committed as they came), e.g. %s",
			len(late), late[0])
	}
}

// publishThrough publishes n Notes by alice, round robin through procs'
// outboxes, and returns their activity ids.
func publishThrough(t *testing.T, procs []*process, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		req, _ := http.NewRequest("POST", "http://"+procs[i%len(procs)].Addr+"/users/alice/outbox",
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
			t.Fatalf("publish through node %d: %d", i%len(procs), res.StatusCode)
		}
		ids = append(ids, doc.ID)
	}
	return ids
}

// heldBy returns the node among procs that holds the most leased
// deliveries to the held hosts (nil if none does), and its process id.
func heldBy(t *testing.T, db *store.DB, procs []*process, heldHosts map[string]bool) (*process, string) {
	t.Helper()
	ctx := context.Background()
	counts := map[string]int{}
	all, err := db.AllDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if d.State == store.DeliveryLeased && heldHosts[d.Host] {
			counts[d.LeaseOwner]++
		}
	}
	registered, err := db.Processes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var best *process
	var owner string
	for _, r := range registered {
		for _, p := range procs {
			if p.cmd.Process.Pid == r.PID && counts[r.ID] > counts[owner] {
				best, owner = p, r.ID
			}
		}
	}
	return best, owner
}

// heartbeatOf is when the registered process id last beat.
func heartbeatOf(t *testing.T, db *store.DB, id string) time.Time {
	t.Helper()
	registered, err := db.Processes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range registered {
		if r.ID == id {
			return r.HeartbeatAt
		}
	}
	t.Fatalf("process %s is not registered", id)
	return time.Time{}
}

// leasesOf counts the leased deliveries process id holds.
func leasesOf(t *testing.T, db *store.DB, id string) int {
	t.Helper()
	leases, err := db.LeasesByOwner(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return leases[id]
}

// TestSameActivityToTwoNodes posts each of a remote actor's activities to
// two nodes on one PostgreSQL database at the same moment: each is applied
// once (one inbox item per Create, one follower and one Accept for the
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
