package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/policy"
	"herald/store"
)

// TestCopyToPostgres moves a populated SQLite database into an empty
// PostgreSQL one: every row arrives, flags and digests keep their meaning,
// new rows get fresh ids, and a second copy into the same (now full)
// database is refused without a change.
func TestCopyToPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	src := open(t, filepath.Join(t.TempDir(), "h.db"))
	alice := &store.Actor{Name: "alice", Type: "Person", ManualApproval: true, PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := src.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, err := src.BlockDomain(ctx, "bad.example", "spam"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// The console's and the federation policy's rows come along too.
	if _, _, err := src.InitInstance(ctx, "https", "here.example"); err != nil {
		t.Fatal(err)
	}
	if err := src.SetFederationMode(ctx, policy.ModeAllowlist); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AllowDomain(ctx, "a.example", "friends"); err != nil {
		t.Fatal(err)
	}
	if err := src.SetAdminPassword(ctx, "$2a$10$hash"); err != nil {
		t.Fatal(err)
	}
	token, _, err := src.CreateAdminSession(ctx, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.PauseHost(ctx, "slow.example", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := src.SampleQueueDepth(ctx, now); err != nil {
		t.Fatal(err)
	}
	follower := "https://a.example/u/1"
	err = src.Write(ctx, func(tx *store.Tx) error {
		if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: alice.ID, Follower: follower, Inbox: follower + "/inbox", State: store.StateAccepted}, now); err != nil {
			return err
		}
		_, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://here.example/a/1", Type: "Create", ActorID: alice.ID, Body: []byte("{}"), Public: true, InOutbox: true},
			[]string{follower + "/inbox", "https://bad.example/inbox"}, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	counts, err := src.CopyTo(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	byTable := map[string]int64{}
	for _, c := range counts {
		if c.From != c.To {
			t.Errorf("%s: %d rows, %d copied", c.Table, c.From, c.To)
		}
		byTable[c.Table] = c.To
	}
	for table, want := range map[string]int64{"actors": 1, "followers": 1, "follower_digests": 1, "activities": 1, "deliveries": 2, "blocked_domains": 1, "instance_actor": 0,
		"instance": 1, "allowed_domains": 1, "admin": 1, "admin_sessions": 1, "hosts": 1, "delivery_history": 1} {
		if byTable[table] != want {
			t.Errorf("%s: %d rows copied, want %d", table, byTable[table], want)
		}
	}
	got, err := dst.ActorByName(ctx, "alice")
	if err != nil || !got.ManualApproval || got.ID != alice.ID {
		t.Fatalf("alice on PostgreSQL: %+v %v", got, err)
	}
	if d, err := dst.FollowerDigest(ctx, alice.ID, "https://a.example"); err != nil || d != store.DigestOf(follower) {
		t.Errorf("digest %s %v", d, err)
	}
	if list, err := dst.OutboxPage(ctx, alice.ID, 0, 10); err != nil || len(list) != 1 {
		t.Errorf("outbox %d %v", len(list), err)
	}
	if rows, err := dst.PolicyRows(ctx); err != nil || rows.Mode != policy.ModeAllowlist || policy.Compile(rows).Host("a.example").Refused() || !policy.Compile(rows).Host("b.example").Refused() {
		t.Errorf("policy on PostgreSQL: %+v %v", rows, err)
	}
	if _, err := dst.AdminSessionByToken(ctx, token); err != nil {
		t.Errorf("the console session on PostgreSQL: %v", err)
	}
	if pauses, err := dst.Pauses(ctx, now); err != nil || len(pauses) != 1 || pauses[0].Host != "slow.example" {
		t.Errorf("pauses on PostgreSQL: %+v %v", pauses, err)
	}
	bob := &store.Actor{Name: "bob", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := dst.CreateActor(ctx, bob, "tok2"); err != nil || bob.ID <= alice.ID {
		t.Errorf("a new actor after the copy: id %d (alice %d), %v", bob.ID, alice.ID, err)
	}
	if _, err := src.CopyTo(ctx, dst); err == nil || !strings.Contains(err.Error(), "already holds data") {
		t.Errorf("a copy into a full database: %v", err)
	}
}
