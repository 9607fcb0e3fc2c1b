package delivery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"herald/outbox/delivery"
	"herald/store"
)

// waitFor polls cond until it holds or the deadline passes (a safety net
// for a hung test, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) countState(t *testing.T, state string, ids []int64) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		if e.row(t, id).State == state {
			n++
		}
	}
	return n
}

// TestSlowHostDoesNotDelayOthers runs the real loop: a host that holds every
// request open must not keep deliveries to other hosts waiting, and a
// shutdown hands its unfinished rows back to the queue unspent.
func TestSlowHostDoesNotDelayOthers(t *testing.T) {
	e := newEnv(t, func(c *delivery.Config) { c.DrainTimeout = 100 * time.Millisecond; c.GlobalCap = 2 })
	slow := newInbox(t, e, "127.0.4.1")
	slow.gate = make(chan struct{})
	defer close(slow.gate)
	var slowIDs, fastIDs []int64
	for i := 0; i < 12; i++ {
		for _, id := range e.enqueue(t, store.LaneNormal, slow.url) {
			slowIDs = append(slowIDs, id)
		}
	}
	for i := 0; i < 15; i++ {
		fast := newInbox(t, e, fmt.Sprintf("127.0.4.%d", 10+i))
		for _, id := range e.enqueue(t, store.LaneNormal, fast.url) {
			fastIDs = append(fastIDs, id)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- e.runner.Run(ctx) }()
	waitFor(t, "fast deliveries", func() bool { return e.countState(t, "done", fastIDs) == len(fastIDs) })
	if n := e.countState(t, "done", slowIDs); n != 0 {
		t.Fatalf("%d slow deliveries done while the host holds them", n)
	}
	if m := slow.maxInFlight.Load(); m > 4 {
		t.Errorf("slow host saw %d concurrent requests", m)
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	// Everything unfinished went back to the queue without spending an attempt.
	for _, id := range slowIDs {
		if r := e.row(t, id); r.State != "queued" || r.Attempts != 0 {
			t.Errorf("slow row after shutdown: %+v", r)
		}
	}
}

// TestGracefulShutdownFinishesInFlight: attempts in flight when shutdown
// starts complete (within the drain timeout) and are recorded.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	e := newEnv(t, func(c *delivery.Config) { c.DrainTimeout = 20 * time.Second })
	in := newInbox(t, e, "127.0.4.2")
	in.gate = make(chan struct{})
	ids := e.enqueue(t, store.LaneNormal, in.url)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- e.runner.Run(ctx) }()
	waitFor(t, "the request to arrive", func() bool { return in.inFlight.Load() == 1 })
	cancel()
	close(in.gate)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if r := e.row(t, ids[in.url]); r.State != "done" || r.Attempts != 1 {
		t.Errorf("in-flight delivery after shutdown: %+v", r)
	}
}

// TestExpiredLeasesReturn: rows leased by a runner that died come back when
// their lease expires, and are delivered.
func TestExpiredLeasesReturn(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.4.3")
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	// A runner claims the row and dies before attempting it.
	claimed, err := e.db.ClaimDeliveries(context.Background(), store.DeliveryClaim{Owner: "dead-runner", Lane: store.LaneNormal, Limit: 10, Now: e.clock(), Lease: 5 * time.Minute})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if n := e.step(t); n != 0 {
		t.Fatal("a leased row was claimed twice")
	}
	e.advance(5*time.Minute + time.Second)
	if n := e.step(t); n != 1 {
		t.Fatalf("after lease expiry ran %d", n)
	}
	if r := e.row(t, id); r.State != "done" {
		t.Errorf("%+v", r)
	}
}

// TestRetryDueSoonIsNotDelayedByTheIdleSleep: with a short retry schedule,
// the loop must wake for a retry written back while it slept, not wait out
// MaxIdle.
func TestRetryDueSoonIsNotDelayedByTheIdleSleep(t *testing.T) {
	e := newEnv(t, func(c *delivery.Config) { c.RetryScale = 0.001; c.Now = time.Now; c.MaxIdle = time.Hour })
	e.time.Set(time.Now()) // the inbox verifies signatures against e's clock
	in := newInbox(t, e, "127.0.4.4")
	in.script(503)
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- e.runner.Run(ctx) }()
	// With MaxIdle an hour, only a wake-up can deliver the retry.
	waitFor(t, "the retry", func() bool { return e.row(t, id).State == "done" })
	cancel()
	<-stopped
	if r := e.row(t, id); r.Attempts != 2 {
		t.Errorf("%+v", r)
	}
}
