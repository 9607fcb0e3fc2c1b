package delivery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"herald/store"
)

func TestUnavailableAfterSevenDaysAndProbation(t *testing.T) {
	e := newEnv(t, nil)
	in := newInbox(t, e, "127.0.3.1")
	in.script(500, 500, 500, 500, 500, 500, 500, 500)
	ctx := context.Background()
	id := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	unavailable := func() []store.HostStatus {
		hs, err := e.db.UnavailableHosts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	// Many failures on one day do not make a host unavailable...
	for day := 1; day <= 7; day++ {
		if n := e.step(t); n != 1 {
			t.Fatalf("day %d: ran %d", day, n)
		}
		if day < 7 && len(unavailable()) != 0 {
			t.Fatalf("unavailable after %d days", day)
		}
		e.advance(24 * time.Hour)
	}
	// ...failures on seven distinct days do.
	hs := unavailable()
	if len(hs) != 1 || hs[0].Host != in.host || hs[0].FailingDays != 7 || hs[0].Probation || !strings.Contains(hs[0].LastError, "500") {
		t.Fatalf("unavailable hosts %+v", hs)
	}
	// Its due row is not attempted: it fails as skipped.
	before := in.received.Load()
	e.step(t)
	if r := e.row(t, id); r.State != "failed" || !strings.Contains(r.LastError, "unavailable") || in.received.Load() != before {
		t.Fatalf("due row of an unavailable host: %+v", r)
	}
	// New deliveries to it are not even queued: they are recorded as
	// skipped.
	skippedID := e.enqueue(t, store.LaneNormal, in.url)[in.url]
	if r := e.row(t, skippedID); r.State != "failed" || r.Attempts != 0 || r.LastError != "skipped: host unavailable (deliveries failing on 7 days)" {
		t.Fatalf("enqueued to an unavailable host: %+v", r)
	}

	// It sends us a signed request: probation. Deliveries resume; the
	// first failure makes it unavailable again at once.
	inbound := func() {
		err := e.db.Write(ctx, func(tx *store.Tx) error { return tx.RecordInbound(ctx, in.host, e.clock()) })
		if err != nil {
			t.Fatal(err)
		}
		e.runner.Step(ctx) // picks up the new host state
	}
	inbound()
	if hs := unavailable(); len(hs) != 1 || !hs[0].Probation {
		t.Fatalf("after inbound: %+v", hs)
	}
	id = e.enqueue(t, store.LaneNormal, in.url)[in.url]
	if id == 0 {
		t.Fatal("not queued on probation")
	}
	e.step(t) // the eighth scripted 500
	if hs := unavailable(); len(hs) != 1 || hs[0].Probation {
		t.Fatalf("after a failure on probation: %+v", hs)
	}
	// Probation again; this time the delivery succeeds and clears it all.
	inbound()
	e.advance(time.Hour)
	e.runner.Step(ctx)
	if r := e.row(t, id); r.State != "done" {
		t.Fatalf("delivery on probation: %+v", r)
	}
	if hs := unavailable(); len(hs) != 0 {
		t.Fatalf("still unavailable after a success: %+v", hs)
	}
	if days, err := e.db.FailingDays(ctx, in.host); err != nil || days != 0 {
		t.Errorf("failure days kept after a success: %d (%v)", days, err)
	}
}
