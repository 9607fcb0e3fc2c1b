package store_test

import (
	"context"
	"testing"

	"herald/host"
	"herald/internal/pgtest"
	"herald/policy"
	"herald/store"
)

// TestModerationRows: every severity change bumps the policy version and
// reaches the compiled policy: a limited domain is not refused but
// limited, with its flags; a suspended one is refused; remote accounts'
// rules and local actors' suspensions are carried; lifting them takes
// them out.
func TestModerationRows(t *testing.T) { pgtest.Each(t, testModerationRows) }

func testModerationRows(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	db := pgtest.Open(t, engine)
	alice := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: "x", PublicKeyPEM: "y"}
	if err := db.CreateActor(ctx, alice, "tok"); err != nil {
		t.Fatal(err)
	}
	compiled := func() *policy.Policy {
		t.Helper()
		rows, err := db.PolicyRows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return policy.Compile(rows)
	}
	steps := []func() error{
		func() error {
			_, err := db.SetDomainRule(ctx, store.BlockedDomain{Domain: "loud.example", Severity: policy.SeveritySilence, RejectMedia: true})
			return err
		},
		func() error {
			_, err := db.SetDomainRule(ctx, store.BlockedDomain{Domain: "bad.example", Severity: policy.SeveritySuspend, RejectReports: true, Obfuscate: true})
			return err
		},
		func() error {
			_, err := db.SetAccountRule(ctx, store.AccountRule{Account: "https://ok.example/users/troll", Severity: policy.SeveritySuspend})
			return err
		},
		func() error {
			_, err := db.SetAccountRule(ctx, store.AccountRule{Account: "https://ok.example/users/spammy", Severity: policy.SeveritySilence})
			return err
		},
		func() error { _, err := db.SuspendActor(ctx, alice.ID, "spam"); return err },
	}
	for i, step := range steps {
		before := compiled().Version()
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if compiled().Version() <= before {
			t.Errorf("step %d did not bump the policy version", i)
		}
	}
	p := compiled()
	if p.Host("www.loud.example").Refused() || !p.Host("www.bad.example").Refused() {
		t.Errorf("limit refused, or suspend not: %+v %+v", p.Host("www.loud.example"), p.Host("www.bad.example"))
	}
	if m := p.Moderate("https://www.loud.example/users/a"); !m.Limited || !m.RejectMedia || m.RejectReports || m.Entry != "loud.example" {
		t.Errorf("limited domain: %+v", m)
	}
	if m := p.Moderate("https://ok.example/users/spammy"); !m.Limited || m.RejectMedia {
		t.Errorf("limited account: %+v", m)
	}
	if m := p.Moderate("https://ok.example/users/other"); m.Limited {
		t.Errorf("another account of the host is limited: %+v", m)
	}
	if !p.Suspended("https://ok.example/users/troll") || p.Suspended("https://ok.example/users/spammy") {
		t.Error("account suspension")
	}
	if !p.ActorSuspended(alice.ID) || p.Delivery(alice.ID, mustAuthority(t, "ok.example"), db.Now()).Rule != policy.RuleActorSuspended {
		t.Errorf("actor suspension: %+v", p.Delivery(alice.ID, mustAuthority(t, "ok.example"), db.Now()))
	}
	list, err := db.BlockedDomains(ctx)
	if err != nil || len(list) != 2 || list[0].Domain != "bad.example" || !list[0].Obfuscate || !list[0].RejectReports ||
		list[1].Severity != policy.SeveritySilence || !list[1].RejectMedia {
		t.Errorf("blocked domains %+v, %v", list, err)
	}
	if err := db.UnsuspendActor(ctx, alice.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.ClearAccountRule(ctx, "https://ok.example/users/troll"); err != nil {
		t.Fatal(err)
	}
	if p := compiled(); p.ActorSuspended(alice.ID) || p.Suspended("https://ok.example/users/troll") {
		t.Error("lifted rules still in the policy")
	}
	if err := db.UnsuspendActor(ctx, alice.ID); err != store.ErrNotFound {
		t.Errorf("second unsuspend: %v", err)
	}
}

func mustAuthority(t *testing.T, s string) host.Authority {
	t.Helper()
	a, err := host.ParseAuthority(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
