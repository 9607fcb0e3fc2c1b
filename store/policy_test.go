package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestPolicy: a block covers the domain and its subdomains (never a name
// that merely ends like it, never another IP address); allowlist mode
// refuses what no allow covers and a block beats an allow; the snapshot the
// scheduler judges by agrees with the query the inbox asks.
func TestPolicy(t *testing.T) { pgtest.Each(t, testPolicy) }

func testPolicy(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	if _, _, err := db.InitInstance(ctx, "https", "herald.example"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bad.example", "10.0.0.1"} {
		if _, err := db.BlockDomain(ctx, d, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"good.example", "evil.good.example", "10.0.0.2"} {
		if _, err := db.AllowDomain(ctx, d, ""); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		host                 string
		blocklist, allowlist bool // refused in each mode
	}{
		{"bad.example", true, true},
		{"BAD.Example.", true, true},
		{"a.b.bad.example", true, true},
		{"notbad.example", false, true},
		{"bad.example.net", false, true},
		{"good.example", false, false},
		{"www.good.example", false, false},
		{"evil.good.example", false, false}, // allowed twice, blocked never
		{"10.0.0.1", true, true},
		{"0.0.1", false, true}, // an address has no parent domain
		{"10.0.0.2", false, false},
		{"1.10.0.0.2", false, true},
		{"::1", false, true},
	}
	for _, mode := range []string{store.ModeBlocklist, store.ModeAllowlist} {
		if err := db.SetFederationMode(ctx, mode); err != nil {
			t.Fatal(err)
		}
		p, err := db.Policy(ctx)
		if err != nil || p.Mode != mode {
			t.Fatalf("policy %v %v", p, err)
		}
		for _, c := range cases {
			want := c.blocklist
			if mode == store.ModeAllowlist {
				want = c.allowlist
			}
			got, err := db.Refuses(ctx, c.host)
			if err != nil || got != want {
				t.Errorf("%s: Refuses(%q) = %v %v, want %v", mode, c.host, got, err, want)
			}
			if got := p.Refuses(c.host); got != want {
				t.Errorf("%s: Policy.Refuses(%q) = %v, want %v", mode, c.host, got, want)
			}
		}
	}
	// A block beats an allow in allowlist mode too.
	if _, err := db.BlockDomain(ctx, "evil.good.example", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Refuses(ctx, "x.evil.good.example"); !got {
		t.Error("a blocked subdomain of an allowed domain is let through")
	}
	if err := db.SetFederationMode(ctx, "open"); err == nil {
		t.Error("an unknown mode was recorded")
	}
}

// TestBlockCoversSubdomainsEverywhere: blocking a domain removes the follows
// with its subdomains (not with a look-alike) and skips them at enqueue.
func TestBlockCoversSubdomainsEverywhere(t *testing.T) {
	pgtest.Each(t, testBlockCoversSubdomainsEverywhere)
}

func testBlockCoversSubdomainsEverywhere(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	a := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, a, "tok"); err != nil {
		t.Fatal(err)
	}
	followers := []string{"https://bad.example/u/1", "https://m.bad.example/u/2", "https://notbad.example/u/3", "https://bad.example.net/u/4"}
	err := db.Write(ctx, func(tx *store.Tx) error {
		for _, f := range followers {
			if _, _, err := tx.UpsertFollower(ctx, store.Follower{ActorID: a.ID, Follower: f, Inbox: f + "/inbox", State: store.StateAccepted}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	removed, err := db.BlockDomain(ctx, "bad.example", "")
	if err != nil || removed != 2 {
		t.Fatalf("removed %d %v, want the two on bad.example and m.bad.example", removed, err)
	}
	// The removal kept the follower digests: a recompute finds none stale.
	if fixed, err := db.RecomputeFollowerDigests(ctx); err != nil || fixed != 0 {
		t.Errorf("recompute after the block corrected %d digests %v, want 0", fixed, err)
	}
	err = db.Write(ctx, func(tx *store.Tx) error {
		res, err := tx.EnqueueActivity(ctx, store.OutActivity{IRI: "https://h.example/a/1", Type: "Create", Body: []byte("{}")},
			[]string{"https://x.m.bad.example/inbox", "https://notbad.example/inbox", "https://bad.example.net/inbox"}, time.Now())
		if err == nil && (res.Queued != 2 || res.SkippedBlocked != 1) {
			t.Errorf("enqueue %+v, want 2 queued and the subdomain skipped", res)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportBlocksIsIdempotent: an import adds what is new, keeps the
// reasons of what was there, and a second run adds nothing.
func TestImportBlocksIsIdempotent(t *testing.T) { pgtest.Each(t, testImportBlocksIsIdempotent) }

func testImportBlocksIsIdempotent(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	if _, err := db.BlockDomain(ctx, "old.example", "mine"); err != nil {
		t.Fatal(err)
	}
	list := []store.BlockedDomain{{Domain: "old.example", Reason: "theirs"}, {Domain: "new.example", Reason: "spam"}}
	added, _, err := db.ImportBlocks(ctx, list)
	if err != nil || len(added) != 1 || added[0] != "new.example" {
		t.Fatalf("first import added %v %v", added, err)
	}
	if added, _, err = db.ImportBlocks(ctx, list); err != nil || len(added) != 0 {
		t.Fatalf("second import added %v %v", added, err)
	}
	got, err := db.BlockedDomains(ctx)
	if err != nil || len(got) != 2 || got[0].Domain != "new.example" || got[0].Reason != "spam" || got[1].Reason != "mine" {
		t.Errorf("blocklist %+v %v", got, err)
	}
}

// BenchmarkRefuses is the federation policy's check as the inbox makes it
// for every request: a host of three labels against a blocklist of 2,000
// domains (a shared list's size) and an allowlist of 100, in allowlist mode.
func BenchmarkRefuses(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, _, err := db.InitInstance(ctx, "https", "herald.example"); err != nil {
		b.Fatal(err)
	}
	var list []store.BlockedDomain
	for i := range 2000 {
		list = append(list, store.BlockedDomain{Domain: fmt.Sprintf("bad%d.example", i)})
	}
	if _, _, err := db.ImportBlocks(ctx, list); err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		if _, err := db.AllowDomain(ctx, fmt.Sprintf("friend%d.example", i), ""); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.SetFederationMode(ctx, store.ModeAllowlist); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if refused, err := db.Refuses(ctx, "social.friend42.example"); err != nil || refused {
			b.Fatal(refused, err)
		}
	}
}
