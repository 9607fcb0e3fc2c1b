package policy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/host"
)

// TestHost: a block covers the domain and its subdomains in any spelling
// (never a name that merely ends like it, never another IP address);
// allowlist mode refuses what no allow covers and a block beats an allow.
func TestHost(t *testing.T) {
	rows := Rows{
		Blocked: []string{"bad.example", "10.0.0.1", "Bücher.Example", "127.0.0.61"},
		Allowed: []string{"good.example", "evil.good.example", "10.0.0.2"},
	}
	cases := []struct {
		host                 string
		blocklist, allowlist Rule
	}{
		{"bad.example", RuleBlocked, RuleBlocked},
		{"BAD.Example.", RuleBlocked, RuleBlocked},
		{"a.b.bad.example", RuleBlocked, RuleBlocked},
		{"ｂａｄ。example", RuleBlocked, RuleBlocked},
		{"xn--bcher-kva.example", RuleBlocked, RuleBlocked}, // listed in Unicode by an older Herald
		{"www.BÜCHER.example", RuleBlocked, RuleBlocked},
		{"notbad.example", "", RuleNotAllowed},
		{"bad.example.net", "", RuleNotAllowed},
		{"good.example", "", ""},
		{"www.good.example", "", ""},
		{"evil.good.example", "", ""}, // allowed twice, blocked never
		{"10.0.0.1", RuleBlocked, RuleBlocked},
		{"::ffff:10.0.0.1", RuleBlocked, RuleBlocked},
		{"[::ffff:7f00:3d]", RuleBlocked, RuleBlocked},
		{"2130706493", RuleBlocked, RuleBlocked},
		{"0.0.1", "", RuleNotAllowed}, // an address has no parent domain
		{"10.0.0.2", "", ""},
		{"1.10.0.0.2", RuleInvalid, RuleInvalid}, // five parts: no host
		{"::1", "", RuleNotAllowed},
	}
	for _, mode := range []string{ModeBlocklist, ModeAllowlist} {
		rows.Mode = mode
		p := Compile(rows)
		for _, c := range cases {
			want := c.blocklist
			if mode == ModeAllowlist {
				want = c.allowlist
			}
			n, err := host.Parse(c.host)
			if err != nil {
				n = ""
			}
			if got := p.Host(n); got.Rule != want {
				t.Errorf("%s: Host(%q) = %+v, want %q", mode, c.host, got, want)
			}
		}
	}
	rows.Mode = ModeAllowlist
	rows.Blocked = append(rows.Blocked, "evil.good.example")
	if v := Compile(rows).Host("x.evil.good.example"); v.Rule != RuleBlocked || v.Entry != "evil.good.example" {
		t.Errorf("a blocked subdomain of an allowed domain: %+v", v)
	}
	if v := (*Policy)(nil).Host("good.example"); !v.Refused() {
		t.Error("no policy must refuse everything")
	}
}

// TestDelivery: the actor's own blocks, unavailable and paused hosts, and
// which verdicts hold a delivery rather than fail it.
func TestDelivery(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := Compile(Rows{
		Mode:         ModeAllowlist,
		Allowed:      []string{"friend.example", "gone.example", "slow.example", "later.example"},
		ActorDomains: []ActorDomain{{ActorID: 7, Domain: "friend.example"}},
		Unavailable:  []string{"gone.example:8443"},
		Paused:       []Pause{{Host: "slow.example"}, {Host: "later.example", Until: now.Add(time.Minute)}, {Host: "over.friend.example", Until: now.Add(-time.Second)}},
	})
	for _, c := range []struct {
		actor int64
		auth  string
		want  Rule
		held  bool
	}{
		{0, "friend.example", "", false},
		{7, "FRIEND.example", RuleActorBlocked, false},
		{7, "www.friend.example", "", false}, // an actor's block covers that host alone
		{8, "friend.example", "", false},
		{0, "gone.example:8443", RuleUnavailable, false},
		{0, "gone.example", "", false},
		{0, "slow.example", RulePaused, true},
		{0, "later.example", RulePaused, true},
		{0, "over.friend.example", "", false}, // the pause ran out
		{0, "stranger.example", RuleNotAllowed, true},
	} {
		a, err := host.ParseAuthority(c.auth)
		if err != nil {
			t.Fatal(err)
		}
		v := p.Delivery(c.actor, a, now)
		if v.Rule != c.want || v.Held() != c.held {
			t.Errorf("Delivery(%d, %s) = %+v (held %v), want %q (held %v)", c.actor, c.auth, v, v.Held(), c.want, c.held)
		}
		if v.Refused() && v.Reason() == "" {
			t.Errorf("%s: a refusal without a reason", c.auth)
		}
	}
}

type fakeSource struct {
	rows    Rows
	reads   int
	asks    int
	commits uint64
	fail    error
}

func (s *fakeSource) PolicyVersion(context.Context) (int64, error) {
	s.asks++
	return s.rows.Version, s.fail
}

func (s *fakeSource) PolicyRows(context.Context) (Rows, error) {
	s.reads++
	return s.rows, s.fail
}

func (s *fakeSource) Commits() uint64 { return s.commits }

// TestLive: the policy is read once, asked about again after a commit or a
// wake-up, read again only when its version moved, and kept when the
// database cannot be asked; OnChange sees each new version.
func TestLive(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{rows: Rows{Version: 1, Mode: ModeBlocklist}}
	l := NewLive(src, time.Hour)
	var changes []int64
	l.OnChange(func(old, cur *Policy) { changes = append(changes, cur.Version()) })
	for range 3 {
		if p, err := l.Get(ctx); err != nil || p.Version() != 1 {
			t.Fatal(p, err)
		}
	}
	if src.reads != 1 || src.asks != 0 {
		t.Fatalf("reads %d asks %d, want one read and no question", src.reads, src.asks)
	}
	src.commits++ // a write in this process, not to the policy
	l.Get(ctx)
	if src.reads != 1 || src.asks != 1 {
		t.Fatalf("after a commit: reads %d asks %d", src.reads, src.asks)
	}
	src.rows = Rows{Version: 2, Mode: ModeAllowlist}
	l.Invalidate() // another process woke us
	if p, _ := l.Get(ctx); p.Mode() != ModeAllowlist || src.reads != 2 {
		t.Fatalf("after a wake-up: %v, reads %d", p.Mode(), src.reads)
	}
	src.fail = errors.New("database gone")
	src.commits++
	if p, err := l.Get(ctx); err != nil || p.Version() != 2 {
		t.Fatalf("a failed check must keep the last policy: %v %v", p, err)
	}
	if _, err := NewLive(src, 0).Get(ctx); err == nil {
		t.Error("no policy ever read must be an error")
	}
	src.fail = nil
	src.rows.Version = 3
	asks := src.asks
	if p, _ := l.Fresh(ctx); p.Version() != 3 || src.asks != asks+2 {
		t.Errorf("Fresh must ask at once: version %d, %d questions", p.Version(), src.asks-asks)
	}
	if len(changes) != 2 || changes[0] != 2 || changes[1] != 3 {
		t.Errorf("changes %v", changes)
	}
}

// TestLiveGetIn: a caller inside a transaction reads through it, never
// through the Live's own source, and what it reads there is not kept (the
// transaction may not commit): the Live's copy moves only through Get.
func TestLiveGetIn(t *testing.T) {
	ctx := context.Background()
	own := &fakeSource{rows: Rows{Version: 1, Mode: ModeBlocklist}}
	l := NewLive(own, time.Hour)
	tx := &fakeSource{rows: Rows{Version: 1, Mode: ModeBlocklist}}
	if p, err := l.GetIn(ctx, tx); err != nil || p.Version() != 1 || tx.reads != 1 || own.reads+own.asks != 0 {
		t.Fatalf("no policy held: %v %v, tx reads %d, own %d+%d", p, err, tx.reads, own.reads, own.asks)
	}
	if _, err := l.Get(ctx); err != nil || own.reads != 1 {
		t.Fatal("what GetIn read was kept", err, own.reads)
	}
	if _, err := l.GetIn(ctx, tx); err != nil || tx.asks != 1 || tx.reads != 1 {
		t.Fatalf("a policy not due was checked: tx asks %d reads %d", tx.asks, tx.reads)
	}
	own.commits++ // due
	if p, _ := l.GetIn(ctx, tx); p.Version() != 1 || tx.asks != 2 || tx.reads != 1 {
		t.Fatalf("the same version: %v, tx asks %d reads %d", p, tx.asks, tx.reads)
	}
	tx.rows = Rows{Version: 2, Mode: ModeAllowlist} // a change of the transaction's own
	if p, _ := l.GetIn(ctx, tx); p.Mode() != ModeAllowlist || tx.reads != 2 {
		t.Fatalf("the transaction's version: %v, reads %d", p.Mode(), tx.reads)
	}
	if p, _ := l.Get(ctx); p.Version() != 1 || p.Mode() != ModeBlocklist {
		t.Errorf("the transaction's read reached the Live: %v %v", p.Version(), p.Mode())
	}
	if own.reads+own.asks != 2 {
		t.Errorf("GetIn asked the Live's own source: reads %d asks %d", own.reads, own.asks)
	}
}

// countingSource is a Source safe for concurrent use that counts its
// reads of the rows (each one a compile for GetIn).
type countingSource struct {
	rows  Rows
	reads atomic.Int64
}

func (s *countingSource) PolicyVersion(context.Context) (int64, error) { return s.rows.Version, nil }

func (s *countingSource) PolicyRows(context.Context) (Rows, error) {
	s.reads.Add(1)
	return s.rows, nil
}

// TestLiveGetInCompilesOnce: while the Live is due and behind, the callers
// of GetIn, each in a transaction of its own, at once or one after
// another, compile the policy once per version, not once per call; a new
// version is compiled once more.
func TestLiveGetInCompilesOnce(t *testing.T) {
	ctx := context.Background()
	own := &fakeSource{rows: Rows{Version: 1, Mode: ModeBlocklist}}
	l := NewLive(own, time.Hour)
	if _, err := l.Get(ctx); err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	call := func(v int64) *Policy {
		tx := &countingSource{rows: Rows{Version: v, Mode: ModeAllowlist}}
		p, err := l.GetIn(ctx, tx)
		if err != nil {
			t.Error(err)
		}
		reads.Add(tx.reads.Load())
		return p
	}
	own.commits++ // due from now on: nothing calls Get
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p := call(2); p == nil || p.Version() != 2 || p.Mode() != ModeAllowlist {
				t.Errorf("GetIn at version 2: %v", p)
			}
		}()
	}
	wg.Wait()
	for range 5 {
		call(2)
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("version 2 compiled %d times, want once", n)
	}
	if p := call(3); p.Version() != 3 || reads.Load() != 2 {
		t.Errorf("version 3: %v, %d compiles in all, want 2", p.Version(), reads.Load())
	}
	if p, _ := l.Get(ctx); p.Version() != 1 {
		t.Errorf("what GetIn compiled reached the Live: version %d", p.Version())
	}
}
