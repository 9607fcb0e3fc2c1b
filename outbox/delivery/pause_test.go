package delivery_test

import (
	"context"
	"testing"
	"time"

	"herald/store"
)

// TestPausedHostGetsNothingUntilResumed: a paused host's deliveries stay
// queued without an attempt (no retry spent) while another host is served;
// after the pause they all go out, never more than the per-host cap at once.
func TestPausedHostGetsNothingUntilResumed(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	paused := newInbox(t, e, "127.0.2.11")
	other := newInbox(t, e, "127.0.2.12")
	if _, err := e.db.PauseHost(ctx, paused.host, e.clock().Add(6*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var held []int64
	for i := 0; i < 12; i++ {
		ids := e.enqueue(t, store.LaneNormal, paused.url, other.url)
		held = append(held, ids[paused.url])
	}
	if n := e.step(t); n != 12 || other.received.Load() != 12 || paused.received.Load() != 0 {
		t.Fatalf("step ran %d; other got %d, paused got %d", n, other.received.Load(), paused.received.Load())
	}
	for _, id := range held {
		if r := e.row(t, id); r.State != "queued" || r.Attempts != 0 {
			t.Fatalf("held row %+v", r)
		}
	}
	if _, ok, err := e.db.NextDue(ctx, store.LaneNormal); ok || err != nil {
		t.Errorf("a paused host's rows count as due (%v): the runner would spin", err)
	}
	if pauses, _ := e.db.Pauses(ctx, e.clock()); len(pauses) != 1 || pauses[0].Host != paused.host || pauses[0].Queued != 12 {
		t.Errorf("pauses %+v", pauses)
	}

	if _, err := e.db.ResumeHost(ctx, paused.host); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ResumeHost(ctx, paused.host); err != store.ErrNotFound {
		t.Errorf("resume twice: %v", err)
	}
	paused.gate = make(chan struct{})
	done := make(chan struct{})
	go func() { e.step(t); close(done) }()
	for paused.inFlight.Load() < 4 {
		time.Sleep(time.Millisecond)
	}
	close(paused.gate)
	<-done
	if m := paused.maxInFlight.Load(); m != 4 {
		t.Errorf("released at %d at once, want the per-host cap (4)", m)
	}
	for _, id := range held {
		if r := e.row(t, id); r.State != "done" || r.Attempts != 1 {
			t.Errorf("after resume: %+v", r)
		}
	}
}

// TestPauseEnds: a pause with an end holds nothing after it.
func TestPauseEnds(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.2.13")
	if _, err := e.db.PauseHost(context.Background(), in.host, e.clock().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	if n := e.step(t); n != 0 {
		t.Errorf("%d attempted while paused", n)
	}
	e.advance(time.Hour + time.Second)
	e.step(t)
	if r := e.row(t, id); r.State != "done" || r.Attempts != 1 {
		t.Errorf("after the pause ended: %+v", r)
	}
}
