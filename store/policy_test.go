package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"herald/host"
	"herald/internal/pgtest"
	"herald/policy"
	"herald/store"
)

// TestPolicyRows: the policy's rows come back as written on both engines,
// and every change to them (and nothing else, not a host's signed request)
// moves the version policy.Live watches.
func TestPolicyRows(t *testing.T) { pgtest.Each(t, testPolicyRows) }

func testPolicyRows(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	if _, _, err := db.InitInstance(ctx, "https", "herald.example"); err != nil {
		t.Fatal(err)
	}
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	version := func() int64 {
		t.Helper()
		v, err := db.PolicyVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	changes := []struct {
		what string
		do   func() error
	}{
		{"block", func() error { _, err := db.BlockDomain(ctx, "bad.example", ""); return err }},
		{"allow", func() error { _, err := db.AllowDomain(ctx, "good.example", ""); return err }},
		{"mode", func() error { return db.SetFederationMode(ctx, policy.ModeAllowlist) }},
		{"pause", func() error { _, err := db.PauseHost(ctx, "slow.example", time.Time{}); return err }},
		{"actor block", func() error { _, err := db.AddActorDomainBlock(ctx, alice.ID, "meh.example", time.Now()); return err }},
		{"unavailable", func() error {
			_, err := db.ExecContext(ctx, `INSERT INTO hosts(host, unavailable_since) VALUES ('gone.example:8443', 1)`)
			return err
		}},
		{"resume", func() error { _, err := db.ResumeHost(ctx, "slow.example"); return err }},
		{"unblock", func() error { return db.UnblockDomain(ctx, "bad.example") }},
	}
	for _, c := range changes {
		before := version()
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if after := version(); after <= before {
			t.Errorf("%s: the version stayed at %d", c.what, after)
		}
	}
	if _, err := db.PauseHost(ctx, "slow.example", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before := version()
	if err := db.RecordInbound(ctx, "busy.example", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.SetFederationMode(ctx, policy.ModeAllowlist); err != nil { // no change
		t.Fatal(err)
	}
	if after := version(); after != before {
		t.Errorf("a signed request and a mode set to itself moved the version from %d to %d", before, after)
	}
	rows, err := db.PolicyRows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rows.Version != before || rows.Mode != policy.ModeAllowlist || len(rows.Blocked) != 0 || len(rows.Allowed) != 1 ||
		len(rows.ActorDomains) != 1 || rows.ActorDomains[0] != (policy.ActorDomain{ActorID: alice.ID, Domain: "meh.example"}) ||
		len(rows.Unavailable) != 1 || rows.Unavailable[0] != "gone.example:8443" || len(rows.Paused) != 1 || rows.Paused[0].Until.IsZero() {
		t.Errorf("rows %+v", rows)
	}
	p := policy.Compile(rows)
	if p.Host("www.good.example").Refused() || !p.Host("stranger.example").Refused() {
		t.Errorf("the compiled policy: %+v %+v", p.Host("www.good.example"), p.Host("stranger.example"))
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

// BenchmarkPolicyHost is the federation policy's check as the inbox makes
// it for every request: a host of three labels against a blocklist of
// 2,000 domains (a shared list's size) and an allowlist of 100, in
// allowlist mode, through a policy.Live after a commit in the process (so
// the version is asked each time: the inbox's worst case).
func BenchmarkPolicyHost(b *testing.B) {
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
	if err := db.SetFederationMode(ctx, policy.ModeAllowlist); err != nil {
		b.Fatal(err)
	}
	live := policy.NewLive(db, 0)
	b.ReportAllocs()
	for b.Loop() {
		live.Invalidate()
		p, err := live.Get(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n, err := host.Parse("social.friend42.example")
		if err != nil || p.Host(n).Refused() {
			b.Fatal(err)
		}
	}
}
