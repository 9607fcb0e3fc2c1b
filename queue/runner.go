// Package queue is the one runner of Herald's durable queues: federation
// deliveries, webhook deliveries, the operator's jobs and the FEP-8fcf
// followers syncs, each a table whose rows a process claims with a lease
// that names it, works, and writes back.
//
// A queue contributes only what is its own, as a Spec: the claim (its SQL,
// through the store), the work, the write-back of a batch of results, when
// its next row is due, its caps, and the key its fairness goes by (the host
// for deliveries, the endpoint for webhooks). The Runner does the rest for
// every queue alike: it claims what the caps allow, runs each item on a
// goroutine of its own within the queue's cap and its key's, commits the
// results in batches as they come (group commit, a few milliseconds after
// the first), renews the leases it holds and hands back the expired ones,
// beats for its process and hands back at once the leases of processes that
// stopped beating, sweeps what the queues no longer need, and runs the
// node's other periodic work; on shutdown it stops claiming, lets the work in
// flight finish for a while, hands back what did not, and writes every
// result before it returns. The retry schedule the queues share is in
// retry.go.
//
// A row is delivered at least once: a crash loses nothing (a claimed row is
// leased, and comes back when its owner is seen gone or its lease runs out),
// and may repeat what was in flight.
package queue

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"herald/store"
)

// Config configures a Runner. Zero fields take the defaults.
type Config struct {
	DB *store.DB
	// Owner is the registered process whose name the leases carry
	// (store.RegisterProcess); default a random one, for tests.
	Owner  string
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Lease is how long a claimed row stays the owner's without renewal
	// (default 5 min); the runner renews its leases every quarter of it.
	Lease time.Duration
	// MaxIdle is the longest sleep with nothing due (default 5 s): the
	// fallback for rows another process queued without a wake-up.
	MaxIdle time.Duration
	// DrainTimeout is how long a graceful shutdown lets work in flight
	// finish (default 10 s).
	DrainTimeout time.Duration

	// Heartbeat, when set, makes the runner beat for Owner that often and
	// hand back, at start and after each beat, the leases of processes
	// whose last beat is older than StaleAfter (store.ReclaimLeases).
	// Register registers Owner again when another process took it for
	// gone. A runner without (tests, benchmarks) only expires leases.
	Heartbeat, StaleAfter time.Duration
	Register              func(ctx context.Context) error

	// SweepInterval is how often the queues' Sweeps run (default 1 h):
	// what they delete has a retention of days.
	SweepInterval time.Duration
}

func (c *Config) defaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Owner == "" {
		c.Owner = "runner-" + strconv.FormatUint(rand.Uint64(), 36)
	}
	setDefault(&c.Lease, 5*time.Minute)
	setDefault(&c.MaxIdle, 5*time.Second)
	setDefault(&c.DrainTimeout, 10*time.Second)
	setDefault(&c.SweepInterval, time.Hour)
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// gather is how long the results of work that finishes together wait to
// share one transaction: a commit for many, a few milliseconds late.
const gather = 5 * time.Millisecond

// Runner runs queues. Create it with New, add queues (Add) and periodic
// tasks (Every), and run it with Run (the server) or Step (tests).
type Runner struct {
	cfg    Config
	queues []*Queue
	tasks  []task
	wakes  <-chan struct{}
	onWake func(ctx context.Context)

	wake     chan struct{} // work may be due
	finished chan struct{} // an item finished: capacity freed
	flush    chan struct{} // results are pending
}

// task is periodic work the runner owns besides the queues.
type task struct {
	name  string
	every time.Duration
	fn    func(ctx context.Context)
}

// New creates a Runner.
func New(cfg Config) *Runner {
	cfg.defaults()
	return &Runner{cfg: cfg, wake: make(chan struct{}, 1), finished: make(chan struct{}, 1), flush: make(chan struct{}, 1)}
}

// Owner is the process whose name the runner's leases carry.
func (r *Runner) Owner() string { return r.cfg.Owner }

// Every adds periodic work: fn runs once when Run starts and then every
// interval until Run's context ends. Call it before Run.
func (r *Runner) Every(name string, interval time.Duration, fn func(ctx context.Context)) {
	r.tasks = append(r.tasks, task{name, interval, fn})
}

// Listen makes the runner follow wake-ups from other processes (the serve
// lock's pipe, PostgreSQL's LISTEN): each calls onWake, then looks at the
// queues. Call it before Run.
func (r *Runner) Listen(wakes <-chan struct{}, onWake func(ctx context.Context)) {
	r.wakes, r.onWake = wakes, onWake
}

// Wake tells the runner that work may be due (call it after the
// transaction that queued it committed). It never blocks.
func (r *Runner) Wake() { signal(r.wake) }

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// run is what one Run or Step shares with its workers.
type run struct {
	stopping chan struct{} // closed when shutdown starts: waiting items give up
	workers  sync.WaitGroup
}

// Run runs the queues and the periodic work until ctx ends, then shuts
// down gracefully: it stops claiming, lets the work in flight finish for up
// to DrainTimeout, hands back every item not finished, writes every
// result, and stops beating only then, so no other process takes a
// draining runner's rows for a dead one's.
func (r *Runner) Run(ctx context.Context) error {
	bg := context.WithoutCancel(ctx)
	ru := &run{stopping: make(chan struct{})}
	work, cancelWork := context.WithCancel(bg)
	defer cancelWork()

	var side sync.WaitGroup // heartbeat, wake-ups, periodic tasks
	goSide := func(ctx context.Context, f func(context.Context)) {
		side.Add(1)
		go func() { defer side.Done(); f(ctx) }()
	}
	beat, stopBeating := context.WithCancel(bg)
	defer stopBeating()
	if r.cfg.Heartbeat > 0 {
		r.reclaim(bg, r.cfg.DB.ReclaimLeases)
		goSide(beat, r.heartbeat)
	}
	goSide(ctx, r.forwardWakes)
	for _, t := range r.tasks {
		goSide(ctx, t.run)
	}
	if len(r.queues) > 0 {
		goSide(ctx, r.sweep)
	}
	flushing, stopFlushing := context.WithCancel(bg)
	flushed := make(chan struct{})
	go func() { defer close(flushed); r.flushLoop(flushing) }()

	r.maintain(ctx)
	lastMaintenance := r.cfg.Now()
	for ctx.Err() == nil {
		now := r.cfg.Now()
		if now.Sub(lastMaintenance) >= r.cfg.Lease/4 {
			r.maintain(ctx)
			lastMaintenance = now
		}
		if r.claim(ctx, work, ru, now) {
			continue
		}
		r.sleep(ctx, now)
	}

	close(ru.stopping)
	drained := make(chan struct{})
	go func() { ru.workers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(r.cfg.DrainTimeout):
		cancelWork() // work still running is cut off and handed back
		<-drained
	}
	stopFlushing()
	<-flushed
	err := r.flushAll(bg)
	stopBeating()
	side.Wait()
	return err
}

// Step claims every due item of qs (of every queue when none is given) that
// the caps allow, works them, and writes their results, until nothing due
// is left or ctx ends. It returns how many items it worked. Tests drive
// queues with it (and an injected clock) instead of Run.
func (r *Runner) Step(ctx context.Context, qs ...*Queue) (int, error) {
	if len(qs) == 0 {
		qs = r.queues
	}
	ru := &run{stopping: make(chan struct{})}
	for _, q := range qs {
		q.impl.maintain(ctx, r.cfg.Now())
	}
	total := 0
	for ctx.Err() == nil {
		n := 0
		for _, q := range qs {
			c, _ := q.impl.claim(ctx, ctx, ru, r.cfg.Now())
			n += c
		}
		if n == 0 {
			break
		}
		total += n
		ru.workers.Wait()
		for _, q := range qs {
			if err := q.impl.flush(context.WithoutCancel(ctx)); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// claim claims what the caps allow in every queue and starts the work. It
// reports whether a queue filled its whole budget, so that more may be due.
func (r *Runner) claim(ctx, work context.Context, ru *run, now time.Time) bool {
	more := false
	for _, q := range r.queues {
		n, budget := q.impl.claim(ctx, work, ru, now)
		more = more || (n > 0 && n >= budget)
	}
	return more
}

// sleep waits until something can be done: an item is due, a wake-up
// came, or (when due items wait for capacity) an item finished.
func (r *Runner) sleep(ctx context.Context, now time.Time) {
	wait := r.cfg.MaxIdle
	waitForCapacity := false
	for _, q := range r.queues {
		due, ok := q.impl.due(ctx, now)
		if !ok {
			continue
		}
		if d := due.Sub(now); d <= 0 {
			// Items are due that the caps kept us from taking: wait for
			// one to finish.
			waitForCapacity = true
		} else if d < wait {
			wait = d
		}
	}
	// Wake for maintenance too: leases must be renewed, and expired ones
	// come back on time.
	wait = min(wait, r.cfg.Lease/4)
	var finished <-chan struct{}
	if waitForCapacity {
		finished = r.finished
		wait = min(wait, time.Second)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.wake:
	case <-finished:
		// Let a few more finish so the next claim is a batch, not a row.
		time.Sleep(2 * time.Millisecond)
	case <-t.C:
	}
}

// maintain renews the leases the runner holds and hands back the expired
// ones, queue by queue.
func (r *Runner) maintain(ctx context.Context) {
	now := r.cfg.Now()
	for _, q := range r.queues {
		q.impl.maintain(ctx, now)
	}
}

// flushLoop writes pending results in batches as they come, until ctx
// ends (Run writes what is left).
func (r *Runner) flushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.flush:
		}
		time.Sleep(gather)
		if err := r.flushAll(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Error("queue: write results", "err", err)
			time.Sleep(time.Second)
			signal(r.flush)
		}
	}
}

// flushAll writes every queue's pending results, each queue's in one
// transaction of its own.
func (r *Runner) flushAll(ctx context.Context) error {
	var first error
	for _, q := range r.queues {
		if err := q.impl.flush(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// forwardWakes passes each wake-up from another process on: OnWake, then
// the queues.
func (r *Runner) forwardWakes(ctx context.Context) {
	if r.wakes == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wakes:
			if r.onWake != nil {
				r.onWake(ctx)
			}
			r.Wake()
		}
	}
}

// run runs a periodic task until ctx ends.
func (t task) run(ctx context.Context) {
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		t.fn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sweep runs the queues' Sweeps at start and every SweepInterval.
func (r *Runner) sweep(ctx context.Context) {
	task{"sweeps", r.cfg.SweepInterval, func(ctx context.Context) {
		for _, q := range r.queues {
			q.impl.sweep(ctx)
		}
	}}.run(ctx)
}
