package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"herald/outbox/delivery"
	"herald/store"
)

// Queued is a backlog run: Rows deliveries (whole activities to every one
// of Hosts hosts, so rounded up to a multiple of Hosts) are enqueued with
// no runner running and the database closed; then the database is opened
// and a runner started on it, as a restarted server would be, and left to
// deliver the backlog to a healthy farm.
type Queued struct {
	Rows, Hosts int
	Dir         string
	Timeout     time.Duration // bound on draining the backlog (default 10 min)
	Logger      *slog.Logger
	FarmCmd     []string // as Scenario.FarmCmd
}

// QueuedResult is what a Queued run measured.
type QueuedResult struct {
	Rows          int           // delivery rows queued
	Setup         time.Duration // enqueuing them (not part of the figures below)
	Open          time.Duration // store.Open on the queued database
	Startup       time.Duration // store.Open + delivery.New + Run started
	FirstDelivery time.Duration // from the start of Open to the farm's first verified delivery
	Drain         time.Duration // from the start of Open to the last delivery
	PerSecond     float64       // Rows / (Drain - FirstDelivery)
	PeakRSS       uint64        // VmHWM from just before Open to the end of the drain
	PeakReset     bool
	Delivered     int
	Duplicates    int
	TimedOut      bool
}

// RunQueued runs a backlog scenario.
func RunQueued(ctx context.Context, q Queued) (*QueuedResult, error) {
	if q.Hosts <= 0 || q.Rows <= 0 {
		return nil, errors.New("queued: need rows and hosts")
	}
	if q.Timeout <= 0 {
		q.Timeout = 10 * time.Minute
	}
	sc := Scenario{Name: "queued", Hosts: q.Hosts, Followers: q.Hosts, Dir: q.Dir, Logger: q.Logger, FarmCmd: q.FarmCmd}
	e, err := newEnv(ctx, &sc)
	if err != nil {
		return nil, err
	}
	defer e.close()
	acts := (q.Rows + q.Hosts - 1) / q.Hosts
	res := &QueuedResult{}
	iris := make([]string, acts)
	start := time.Now()
	enqueuer := delivery.New(sc.runnerConfig(e.db, e.farm.Dial)) // never run: only enqueues
	for k := range iris {
		iris[k] = activityIRI("queued", k)
		if err := e.farm.Expect(iris[k]); err != nil {
			return nil, err
		}
		r, err := enqueue(ctx, e.db, enqueuer, e.actor.ID, iris[k])
		if err != nil {
			return nil, err
		}
		res.Rows += r.Queued
	}
	res.Setup = time.Since(start)
	if err := e.db.Close(); err != nil {
		return nil, err
	}
	e.db = nil
	enqueuer = nil

	res.PeakReset = ResetPeakRSS()
	start = time.Now()
	if e.db, err = store.Open(ctx, e.path); err != nil {
		return nil, err
	}
	res.Open = time.Since(start)
	runner := delivery.New(sc.runnerConfig(e.db, e.farm.Dial))
	runCtx, stop := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- runner.Run(runCtx) }()
	res.Startup = time.Since(start)
	defer func() {
		stop()
		<-runDone
	}()

	waitCtx, cancelWait := context.WithTimeout(ctx, q.Timeout)
	werr := e.farm.Wait(waitCtx)
	cancelWait()
	end := time.Now()
	res.PeakRSS = PeakRSS()
	if werr != nil {
		if waitCtx.Err() == nil {
			return nil, werr
		}
		res.TimedOut = true
	}
	var first, last time.Time
	for _, iri := range iris {
		at, count, err := e.farm.Arrivals(iri)
		if err != nil {
			return nil, err
		}
		for i, t := range at {
			res.Delivered += count[i]
			res.Duplicates += max(count[i]-1, 0)
			if t.IsZero() {
				continue
			}
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
	}
	if res.TimedOut {
		last = end
	}
	res.FirstDelivery = first.Sub(start)
	res.Drain = last.Sub(start)
	if d := last.Sub(first); d > 0 {
		res.PerSecond = float64(res.Delivered-res.Duplicates) / d.Seconds()
	}
	if res.TimedOut {
		return res, fmt.Errorf("queued: timed out after %s with %d of %d deliveries", q.Timeout, res.Delivered, res.Rows)
	}
	return res, nil
}
