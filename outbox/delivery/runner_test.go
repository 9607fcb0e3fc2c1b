package delivery_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/outbox/delivery"
	"herald/queue"
	"herald/store"
)

func TestRetryThenSuccess(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.2.1")
	in.script(500)
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	if n := e.step(t); n != 1 {
		t.Fatalf("step ran %d", n)
	}
	r := e.row(t, id)
	if r.State != "queued" || r.Attempts != 1 || r.LastStatus != 500 || !r.NextAt.Equal(e.clock().Add(15*time.Second)) {
		t.Fatalf("after a 500: %+v", r)
	}
	// Not due yet: nothing happens.
	e.advance(14 * time.Second)
	if n := e.step(t); n != 0 {
		t.Fatalf("ran %d before due", n)
	}
	e.advance(time.Second)
	e.step(t)
	if r := e.row(t, id); r.State != "done" || r.Attempts != 2 || r.LastStatus != 202 {
		t.Fatalf("after success: %+v", r)
	}
	if in.received.Load() != 2 {
		t.Errorf("received %d", in.received.Load())
	}
}

func TestRetriesSpent(t *testing.T) {
	for _, c := range []struct {
		lane, attempts int
	}{{store.LaneNormal, delivery.MaxRetries + 1}, {store.LaneLow, delivery.MaxRetriesLowLane + 1}} {
		e := newEnv(t, nil)
		in := newInbox(t, e, "127.0.2.2")
		in.script(503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503)
		id := e.enqueue(t, c.lane, in.url)[in.url]
		for i := 0; i < c.attempts; i++ {
			if n := e.step(t); n != 1 {
				t.Fatalf("lane %d attempt %d: step ran %d", c.lane, i+1, n)
			}
			r := e.row(t, id)
			if i < c.attempts-1 {
				if want := e.clock().Add(queue.RetryDelay(i, 0)); r.State != "queued" || !r.NextAt.Equal(want) {
					t.Fatalf("lane %d attempt %d: %+v, want due %v", c.lane, i+1, r, want)
				}
				e.advance(queue.RetryDelay(i, 0))
				// The breaker must not hold this lone row: bypass it by
				// letting its cool-off pass.
				e.advance(time.Minute)
			}
		}
		r := e.row(t, id)
		if r.State != "failed" || r.Attempts != c.attempts || !strings.Contains(r.LastError, "retries spent") {
			t.Errorf("lane %d: %+v", c.lane, r)
		}
		if e.step(t) != 0 {
			t.Error("a failed row ran again")
		}
	}
}

func TestRetryAfterSetsNextAttempt(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.2.3")
	in.script(429, 503)
	in.retryAfter = "3600"
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	e.step(t)
	if r := e.row(t, id); !r.NextAt.Equal(e.clock().Add(time.Hour)) {
		t.Fatalf("429 with Retry-After 3600: due %v", r.NextAt)
	}
	e.advance(time.Hour)
	in.retryAfter = e.clock().Add(2 * time.Hour).Format(http.TimeFormat)
	e.step(t)
	if r := e.row(t, id); !r.NextAt.Equal(e.clock().Add(2 * time.Hour)) {
		t.Fatalf("503 with a Retry-After date: due %v", r.NextAt)
	}
}

func TestPermanentAndGone(t *testing.T) {
	logs := &fedtest.Buffer{}
	e := newEnv(t, func(c *delivery.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	personal := newInbox(t, e, "127.0.2.4")
	shared := newInbox(t, e, "127.0.2.5")
	ctx := context.Background()
	// bob's personal inbox; carol and dan share a shared inbox.
	err := e.db.Write(ctx, func(tx *store.Tx) error {
		for _, f := range []store.Follower{
			{ActorID: e.alice.ID, Follower: "http://" + personal.host + "/users/bob", Inbox: personal.url, State: store.StateAccepted},
			{ActorID: e.alice.ID, Follower: "http://" + shared.host + "/users/carol", Inbox: "http://" + shared.host + "/users/carol/inbox", SharedInbox: shared.url, State: store.StateAccepted},
		} {
			if _, _, err := tx.UpsertFollower(ctx, f, e.clock()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	personal.script(410)
	shared.script(410)
	ids := e.enqueue(t, store.LaneNormal, personal.url, shared.url)
	e.step(t)
	for _, u := range []string{personal.url, shared.url} {
		if r := e.row(t, ids[u]); r.State != "failed" || r.LastStatus != 410 || r.Attempts != 1 {
			t.Errorf("%s: %+v", u, r)
		}
	}
	var left []string
	storetest.Count(t, e.db.AllFollowers, func(f store.Follower) bool { left = append(left, f.Follower); return true })
	if len(left) != 1 || !strings.HasSuffix(left[0], "/users/carol") {
		t.Errorf("followers left %v: want only carol (a 410 from a shared inbox removes nobody)", left)
	}
	// Each delivery given up on is logged with its host, status and
	// activity.
	for _, host := range []string{personal.host, shared.host} {
		if want := `msg="delivery: given up" host=` + host + ` status=410 activity=` + e.inst.ActorID("alice") + "/activities/1"; !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
	// 404 is permanent too, and is kept as failed.
	nf := newInbox(t, e, "127.0.2.6")
	nf.script(404)
	id := e.enqueue(t, store.LaneNormal, nf.url)[nf.url]
	e.step(t)
	if r := e.row(t, id); r.State != "failed" || r.LastStatus != 404 {
		t.Errorf("404: %+v", r)
	}
	if list, _ := e.db.FailedDeliveries(ctx, "", 0); len(list) != 3 {
		t.Errorf("failed deliveries listed: %d", len(list))
	}
	// Requeued by host, it goes out again.
	if n, err := e.db.RequeueFailed(ctx, nf.host, 0); err != nil || n != 1 {
		t.Fatalf("requeue: %d %v", n, err)
	}
	e.step(t)
	if r := e.row(t, id); r.State != "done" {
		t.Errorf("after requeue: %+v", r)
	}
}

// TestKnocks: what each kind of host receives over four deliveries, from
// the evidence Herald holds about it (knocks.go). Every delivery succeeds
// in one attempt (a refused first knock falls back at once); a 2xx alone
// never moves a host off draft-cavage, and only a host with evidence for
// both RFC 9421 and an Ed25519 key is sent an Ed25519 signature.
func TestKnocks(t *testing.T) {
	ctx := context.Background()
	rfc9421 := func(how string) func(*env, string) {
		return func(e *env, host string) {
			e.db.NoteSignatureEvidence(ctx, host, store.Evidence{RFC9421: how}, e.clock())
		}
	}
	ed25519 := func(how string) func(*env, string) {
		return func(e *env, host string) {
			e.db.NoteSignatureEvidence(ctx, host, store.Evidence{Ed25519: how}, e.clock())
		}
	}
	nodeinfo := func(name, version string) func(*env, string) {
		return func(e *env, host string) { e.db.NoteNodeInfo(ctx, host, name, version, e.clock()) }
	}
	for _, tc := range []struct {
		name     string
		setup    func(*inbox)
		evidence []func(*env, string)
		want     string
	}{
		// Verifies everything (as Fedify does), but showed nothing: a 2xx
		// is not evidence, so draft-cavage throughout.
		{"no evidence", func(*inbox) {}, nil, "cavage cavage cavage cavage"},
		{"cavage-only", func(in *inbox) { in.cavageOnly = true }, nil, "cavage cavage cavage cavage"},
		// Refuses draft-cavage: a double knock on the first delivery, and
		// that refusal is the evidence for RFC 9421 (RSA: nothing says it
		// verifies Ed25519).
		{"rfc9421-only", func(in *inbox) { in.rfc9421Only = true }, nil, "cavage rfc9421 rfc9421 rfc9421 rfc9421"},
		{"signs rfc9421", func(*inbox) {}, []func(*env, string){rfc9421(store.EvidenceSigned)}, "rfc9421 rfc9421 rfc9421 rfc9421"},
		{"accept-signature", func(*inbox) {}, []func(*env, string){rfc9421(store.EvidenceAcceptSignature)}, "rfc9421 rfc9421 rfc9421 rfc9421"},
		{"rfc9421 and fep-521a", func(*inbox) {}, []func(*env, string){rfc9421(store.EvidenceSigned), ed25519(store.EvidenceFEP521a)}, "ed25519 ed25519 ed25519 ed25519"},
		// An Ed25519 key alone says nothing about RFC 9421.
		{"fep-521a only", func(*inbox) {}, []func(*env, string){ed25519(store.EvidenceFEP521a)}, "cavage cavage cavage cavage"},
		// Evidence that turns out wrong, on a host that answers 401 to
		// what it cannot verify: one double knock, then never again.
		{"refuses ed25519", func(in *inbox) { in.noEd25519 = true }, []func(*env, string){rfc9421(store.EvidenceSigned), ed25519(store.EvidenceSigned)}, "ed25519 rfc9421 rfc9421 rfc9421 rfc9421"},
		{"refuses rfc9421", func(in *inbox) { in.cavageOnly = true }, []func(*env, string){rfc9421(store.EvidenceAcceptSignature)}, "rfc9421 cavage cavage cavage cavage"},
		{"refuses both", func(in *inbox) { in.cavageOnly = true }, []func(*env, string){rfc9421(store.EvidenceSigned), ed25519(store.EvidenceFEP521a)},
			"ed25519 rfc9421 cavage cavage cavage cavage"},
		// NodeInfo: software known to verify before it answers.
		{"mastodon 4.5", func(*inbox) {}, []func(*env, string){nodeinfo("mastodon", "4.5.1")}, "rfc9421 rfc9421 rfc9421 rfc9421"},
		{"mastodon 4.5 beta", func(*inbox) {}, []func(*env, string){nodeinfo("mastodon", "4.5.0-beta.2")}, "cavage cavage cavage cavage"},
		{"mastodon 4.4", func(*inbox) {}, []func(*env, string){nodeinfo("mastodon", "4.4.3")}, "cavage cavage cavage cavage"},
		{"fep-521a and hollo", func(*inbox) {}, []func(*env, string){ed25519(store.EvidenceFEP521a), nodeinfo("hollo", "0.7.1")}, "ed25519 ed25519 ed25519 ed25519"},
		{"snac", func(*inbox) {}, []func(*env, string){nodeinfo("snac", "2.75")}, "cavage cavage cavage cavage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			in := newInbox(t, e, "127.0.2.7")
			tc.setup(in)
			for _, f := range tc.evidence {
				f(e, in.host)
			}
			for i := range 4 {
				id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
				e.step(t)
				if r := e.row(t, id); r.State != "done" || r.Attempts != 1 {
					t.Fatalf("delivery %d: %+v", i+1, r)
				}
			}
			if got := strings.Join(in.receivedKnocks(), " "); got != tc.want {
				t.Errorf("received %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCircuitBreaker(t *testing.T) {
	e := newEnv(t, func(c *delivery.Config) { c.PerHostCap = 1; c.BreakerThreshold = 3 })
	in := newInbox(t, e, "127.0.2.8")
	in.script(500, 500, 500, 500)
	var ids []int64
	for i := 0; i < 5; i++ {
		for _, id := range e.enqueue(t, store.LaneNormal, in.url) {
			ids = append(ids, id)
		}
	}
	e.step(t)
	// Three failures open the circuit; the other two rows are held for
	// the cool-off without spending an attempt.
	if got := in.received.Load(); got != 3 {
		t.Fatalf("received %d, want 3", got)
	}
	openUntil := e.clock().Add(delivery.DefaultBreakerCoolOff)
	held := 0
	for _, id := range ids {
		r := e.row(t, id)
		if r.Attempts == 0 {
			held++
			if r.State != "queued" || !r.NextAt.Equal(openUntil) {
				t.Errorf("held row %+v, want due %v", r, openUntil)
			}
		}
	}
	if held != 2 || len(e.runner.OpenCircuits()) != 1 {
		t.Fatalf("held %d, open circuits %v", held, e.runner.OpenCircuits())
	}
	// After the cool-off one probe goes; it fails (the fourth 500) and
	// the circuit opens again.
	e.advance(delivery.DefaultBreakerCoolOff)
	e.step(t)
	if got := in.received.Load(); got != 4 {
		t.Fatalf("probe: received %d, want 4", got)
	}
	// The next probe succeeds and closes it; everything due goes out.
	e.advance(delivery.DefaultBreakerCoolOff)
	for e.step(t) > 0 {
	}
	e.advance(time.Hour)
	for e.step(t) > 0 {
	}
	if len(e.runner.OpenCircuits()) != 0 {
		t.Errorf("circuit still open: %v", e.runner.OpenCircuits())
	}
	for _, id := range ids {
		if r := e.row(t, id); r.State != "done" {
			t.Errorf("row %d: %+v", id, r)
		}
	}
}

func TestPerHostCapNeverExceeded(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.2.9")
	in.gate = make(chan struct{})
	var ids []int64
	for i := 0; i < 20; i++ {
		for _, id := range e.enqueue(t, store.LaneNormal, in.url) {
			ids = append(ids, id)
		}
	}
	done := make(chan struct{})
	go func() { e.step(t); close(done) }()
	// Let requests pile up against the gate, then open it.
	for in.inFlight.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(in.gate)
	<-done
	if m := in.maxInFlight.Load(); m != 4 {
		t.Errorf("max concurrent requests to one host: %d, want 4", m)
	}
	for _, id := range ids {
		if r := e.row(t, id); r.State != "done" {
			t.Fatalf("row %+v", r)
		}
	}
}

func TestBlockedAfterEnqueueIsNotSent(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.2.10")
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	if _, err := e.db.BlockDomain(context.Background(), "127.0.2.10", "spam"); err != nil {
		t.Fatal(err)
	}
	e.step(t)
	if r := e.row(t, id); r.State != "failed" || r.LastError != "skipped: domain blocked (127.0.2.10)" || in.received.Load() != 0 {
		t.Errorf("row %+v, received %d", r, in.received.Load())
	}
}
