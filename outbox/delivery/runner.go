// Package delivery is Herald's durable delivery scheduler: every queued
// (activity, inbox) row in the database reaches its server, through
// restarts, outages and dead servers.
//
// A Runner claims due rows in batches with a lease, runs them on a worker
// pool with a global and a per-host concurrency cap, signs each attempt
// afresh (draft-cavage, and RFC 9421 on a 400 or 401: "double-knocking";
// RFC 9421, with Ed25519 where it can, only for hosts that showed evidence
// that they verify it: knocks.go),
// classifies the answer as Mastodon does, and writes results back in
// batches. Failing hosts are shed twice over: a per-host circuit breaker
// reacts in seconds, the unavailable-domain tracker in days. A crash loses
// nothing: a claimed row carries a lease, and an expired lease returns it to
// the queue. The retry schedule is RetryDelay, in schedule.go.
package delivery

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"herald/federation"
	"herald/policy"
	"herald/store"
)

// Config configures a Runner. Zero fields take the defaults.
type Config struct {
	DB *store.DB
	// Policy is the federation policy every delivery is judged by when it
	// is due (default: one of its own on DB); the node shares one.
	Policy   *policy.Live
	Client   *federation.Client
	Instance federation.Instance
	Logger   *slog.Logger
	Metrics  *Metrics
	// Now is the clock (default time.Now); Jitter returns a number in
	// [0, 1) for the retry jitter (default math/rand).
	Now    func() time.Time
	Jitter func() float64

	// GlobalCap bounds the requests being signed, connected and written at
	// once (default 64). A written request that only awaits its answer
	// gives its slot back, so hosts that never answer cannot starve the
	// others; MaxInFlight bounds those (default 1024).
	GlobalCap   int
	MaxInFlight int
	PerHostCap  int           // requests in flight to one host (default 4)
	Lease       time.Duration // how long a claimed row stays ours (default 5 min)
	// Owner is the registered process whose name the leases carry
	// (store.RegisterProcess); default a random one, for tests.
	Owner string
	// MaxIdle is the longest sleep with nothing due (default 5 s): the
	// fallback for rows another process queued without waking the server
	// (commands wake it at once; see store.NotifyServer), at the cost of
	// one indexed query per wake-up.
	MaxIdle time.Duration
	// DrainTimeout is how long a graceful shutdown lets attempts in flight
	// finish (default 10 s).
	DrainTimeout time.Duration

	// FollowersHeader returns the header to add to a delivery of a
	// sender's activity addressed to its followers, recomputed at each
	// attempt: FEP-8fcf's Collection-Synchronization, from followersync.
	// nil adds none (--no-followers-sync).
	FollowersHeader func(ctx context.Context, actorID int64, actorName, inbox string) (name, value string)

	// RetryScale multiplies every retry delay (default 1). Tests that run
	// Herald as a process use a small one instead of a fake clock.
	RetryScale float64

	BreakerThreshold int           // consecutive failures that open a circuit (default 10)
	BreakerCoolOff   time.Duration // how long it stays open (default 60 s)

	// Webhooks configures the webhook lane (webhook.go); its zero value
	// sends no webhooks.
	Webhooks WebhookConfig

	// Signatures is what the node knows of the signatures each host
	// verifies (signatures.go), shared with the inbox and the actor
	// fetcher that record evidence in it; nil makes one of the runner's
	// own.
	Signatures *Signatures
}

func (c *Config) defaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Jitter == nil {
		c.Jitter = rand.Float64
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil, nil)
	}
	if c.Policy == nil {
		c.Policy = policy.NewLive(c.DB, 0)
	}
	setDefault(&c.GlobalCap, 64)
	setDefault(&c.MaxInFlight, 1024)
	setDefault(&c.PerHostCap, federation.DefaultMaxConnsPerHost)
	setDefault(&c.Lease, 5*time.Minute)
	setDefault(&c.MaxIdle, 5*time.Second)
	setDefault(&c.DrainTimeout, 10*time.Second)
	setDefault(&c.RetryScale, 1)
	if c.Owner == "" {
		c.Owner = "runner-" + strconv.FormatUint(rand.Uint64(), 36)
	}
	setDefault(&c.BreakerThreshold, DefaultBreakerThreshold)
	setDefault(&c.BreakerCoolOff, DefaultBreakerCoolOff)
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Runner sends queued deliveries. Create it with New; run it with Run (the
// server) or Step (tests).
type Runner struct {
	cfg      Config
	breaker  *breaker
	global   chan struct{} // slots for requests being signed and sent
	inFlight chan struct{} // slots for requests awaiting an answer
	keys     keyCache
	bodies   bodyCache

	wake     chan struct{} // an enqueue happened
	finished chan struct{} // an attempt finished: capacity freed
	stopping chan struct{} // closed when shutdown starts: waiting workers give up

	mu          sync.Mutex
	outstanding int                      // claimed rows not yet finished
	claimed     map[int64]bool           // their ids, whose leases we renew
	low         int                      // of which in the low lane
	perHost     map[string]int           // claimed rows not yet finished, by host
	hostSlots   map[string]chan struct{} // per-host concurrency slots
	pending     []store.DeliveryResult
	workers     sync.WaitGroup
	flushSignal chan struct{}

	wh webhookLane // webhook.go
}

// New creates a Runner.
func New(cfg Config) *Runner {
	cfg.defaults()
	if cfg.Signatures == nil {
		cfg.Signatures = NewSignatures(cfg.DB, nil, cfg.Logger, cfg.Now)
	}
	r := &Runner{
		cfg:         cfg,
		breaker:     newBreaker(cfg.BreakerThreshold, cfg.BreakerCoolOff),
		global:      make(chan struct{}, cfg.GlobalCap),
		inFlight:    make(chan struct{}, cfg.MaxInFlight),
		wake:        make(chan struct{}, 1),
		finished:    make(chan struct{}, 1),
		stopping:    make(chan struct{}),
		perHost:     map[string]int{},
		claimed:     map[int64]bool{},
		hostSlots:   map[string]chan struct{}{},
		flushSignal: make(chan struct{}, 1),
		wh:          newWebhookLane(cfg.Webhooks),
	}
	r.keys = keyCache{db: cfg.DB, inst: cfg.Instance, now: cfg.Now, keys: map[int64]cachedKey{}, epoch: map[int64]int{}}
	r.bodies = bodyCache{db: cfg.DB, items: map[int64]activityBody{}}
	cfg.Metrics.runner = r
	cfg.Policy.OnChange(func(old, cur *policy.Policy) { go r.releaseHeld(old, cur) })
	return r
}

// maxOutstanding bounds the rows claimed but not finished: enough to keep
// every in-flight slot busy with a batch in hand, small enough that a crash
// returns little to the queue late.
func (r *Runner) maxOutstanding() int { return r.cfg.MaxInFlight + r.cfg.GlobalCap*4 }

// hostBuffer bounds the rows claimed for one host, so a slow host cannot
// take the whole claim budget and delay everyone else.
func (r *Runner) hostBuffer() int { return r.cfg.PerHostCap * 4 }

// lowCap bounds the low lane's share of in-flight work: it never takes the
// capacity the normal lane needs.
func (r *Runner) lowCap() int { return max(1, r.cfg.GlobalCap/4) }

// ForgetKey makes the runner sign the actor's next deliveries with the key
// the database holds now: call it once a key rotation committed.
func (r *Runner) ForgetKey(actorID int64) { r.keys.forget(actorID) }

// Wake tells the runner that deliveries were enqueued. Call it after the
// enqueuing transaction committed. It never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run sends deliveries until ctx is cancelled, then shuts down gracefully:
// it stops claiming, lets attempts in flight finish for up to DrainTimeout,
// hands every unstarted or unfinished row back to the queue, and writes all
// results before returning.
func (r *Runner) Run(ctx context.Context) error {
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	flushDone := make(chan struct{})
	flushCtx, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(flushDone)
		r.flushLoop(flushCtx)
	}()

	// Rows a crashed predecessor held come back as their leases expire;
	// those already expired come back now.
	r.maintain(ctx)
	lastMaintenance := r.cfg.Now()
	for ctx.Err() == nil {
		now := r.cfg.Now()
		if now.Sub(lastMaintenance) >= r.cfg.Lease/4 {
			r.maintain(ctx)
			lastMaintenance = now
		}
		more := r.claimAndStart(ctx, work, now)
		if more {
			continue
		}
		r.sleep(ctx, now)
	}

	// Graceful shutdown.
	close(r.stopping)
	drained := make(chan struct{})
	go func() { r.workers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(r.cfg.DrainTimeout):
		cancelWork() // attempts still running are cut off and released
		<-drained
	}
	stopFlush()
	<-flushDone
	return r.flush(context.WithoutCancel(ctx))
}

// Step claims every due delivery the caps allow, runs them, and writes their
// results before returning how many it ran. Tests drive the runner with it
// (and an injected clock) instead of Run.
func (r *Runner) Step(ctx context.Context) (int, error) {
	r.maintain(ctx)
	total := 0
	for {
		n := r.claimOnce(ctx, ctx, r.cfg.Now())
		if n == 0 {
			break
		}
		total += n
		r.workers.Wait()
		if err := r.flush(ctx); err != nil {
			return total, err
		}
	}
	return total, nil
}

// sleep waits until something can be done: the next row is due, an enqueue
// woke us, or (when due rows are waiting for capacity) an attempt finished.
func (r *Runner) sleep(ctx context.Context, now time.Time) {
	wait := r.cfg.MaxIdle
	waitForCapacity := false
	for _, lane := range []int{store.LaneNormal, store.LaneLow} {
		due, ok, err := r.cfg.DB.NextDue(ctx, lane)
		if err != nil || !ok {
			continue
		}
		if d := due.Sub(now); d <= 0 {
			// Rows are due that we could not take (caps reached, or their
			// hosts' queues full): wait for an attempt to finish.
			waitForCapacity = true
		} else if d < wait {
			wait = d
		}
	}
	if due, ok := r.nextWebhookDue(ctx); ok {
		if d := due.Sub(now); d <= 0 {
			waitForCapacity = true
		} else if d < wait {
			wait = d
		}
	}
	// Wake for maintenance too: leases of a crashed predecessor expire
	// and must come back on time.
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

// maintain renews the leases of the rows this runner holds (a row may wait
// in its host's queue longer than one lease), returns expired leases to the
// queue, and rereads which hosts are unavailable.
func (r *Runner) maintain(ctx context.Context) {
	now := r.cfg.Now()
	r.mu.Lock()
	ids := make([]int64, 0, len(r.claimed))
	for id := range r.claimed {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	if err := r.cfg.DB.RenewLeases(ctx, r.cfg.Owner, ids, now.Add(r.cfg.Lease)); err != nil && ctx.Err() == nil {
		r.cfg.Logger.Error("delivery: renew leases", "err", err)
	}
	if n, err := r.cfg.DB.ExpireLeases(ctx, now); err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("delivery: expire leases", "err", err)
		}
	} else if n > 0 {
		r.cfg.Logger.Info("delivery: expired leases returned to the queue", "rows", n)
	}
	r.maintainWebhooks(ctx, now)
}

// claimAndStart claims what the caps allow and starts a worker per row. It
// reports whether it filled its whole budget, in which case more may be due.
func (r *Runner) claimAndStart(ctx, work context.Context, now time.Time) bool {
	r.mu.Lock()
	budget := r.maxOutstanding() - r.outstanding
	r.mu.Unlock()
	if budget <= 0 {
		return false
	}
	n := r.claimOnce(ctx, work, now)
	return n > 0 && n >= budget
}

// claimOnce claims due rows for both lanes within the caps and starts their
// workers, returning how many it claimed.
func (r *Runner) claimOnce(ctx, work context.Context, now time.Time) int {
	// Asking is what notices a change another process made, which makes
	// the deliveries the policy held due again (releaseHeld).
	r.cfg.Policy.Get(ctx)
	total := 0
	for _, lane := range []int{store.LaneNormal, store.LaneLow} {
		r.mu.Lock()
		limit := r.maxOutstanding() - r.outstanding
		if lane == store.LaneLow {
			limit = min(limit, r.lowCap()-r.low)
		}
		var full []string
		for h, n := range r.perHost {
			if n >= r.hostBuffer() {
				full = append(full, h)
			}
		}
		r.mu.Unlock()
		if limit <= 0 {
			continue
		}
		rows, err := r.cfg.DB.ClaimDeliveries(ctx, r.cfg.Owner, lane, limit, full, now, r.cfg.Lease)
		if err != nil {
			if ctx.Err() == nil {
				r.cfg.Logger.Error("delivery: claim", "err", err)
			}
			continue
		}
		r.mu.Lock()
		for _, c := range rows {
			r.claimed[c.ID] = true
			r.outstanding++
			if c.Lane == store.LaneLow {
				r.low++
			}
			r.perHost[c.Host]++
			if r.hostSlots[c.Host] == nil {
				r.hostSlots[c.Host] = make(chan struct{}, r.cfg.PerHostCap)
			}
		}
		r.mu.Unlock()
		for _, c := range rows {
			r.workers.Add(1)
			go r.work(work, c)
		}
		total += len(rows)
	}
	return total + r.claimWebhooks(ctx, work, now)
}

// done records that a claimed row is finished (its result is pending).
func (r *Runner) done(c store.Claimed, res store.DeliveryResult) {
	r.mu.Lock()
	r.pending = append(r.pending, res)
	delete(r.claimed, c.ID)
	r.outstanding--
	if c.Lane == store.LaneLow {
		r.low--
	}
	if r.perHost[c.Host]--; r.perHost[c.Host] == 0 {
		delete(r.perHost, c.Host)
		delete(r.hostSlots, c.Host)
	}
	r.mu.Unlock()
	signal(r.finished)
	signal(r.flushSignal)
}

// flushLoop writes pending results in batches (group commit) as they come.
func (r *Runner) flushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.flushSignal:
		}
		// Gather what finishes in the next few milliseconds into the same
		// transaction: one commit for many results.
		time.Sleep(5 * time.Millisecond)
		if err := r.flush(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Error("delivery: write results", "err", err)
			time.Sleep(time.Second)
			signal(r.flushSignal)
		}
	}
}

// flushDeliveries writes every pending delivery result in one transaction.
func (r *Runner) flushDeliveries(ctx context.Context) error {
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	unavailable, err := r.cfg.DB.ApplyDeliveryResults(ctx, r.cfg.Owner, batch, r.cfg.Now())
	if err != nil {
		// Keep them for the next flush; the rows stay leased meanwhile.
		r.mu.Lock()
		r.pending = append(batch, r.pending...)
		r.mu.Unlock()
		return err
	}
	// A row handed back to the queue (a retry, a release, a hold) may be due
	// sooner than the loop's current sleep, which was computed while the row
	// was still leased: let the loop look again.
	for _, res := range batch {
		if res.State == store.DeliveryQueued {
			r.Wake()
			break
		}
	}
	if len(unavailable) > 0 {
		// The policy's version moved with them (migration 0130): the
		// next judgement skips them.
		r.cfg.Logger.Warn("delivery: hosts now unavailable", "hosts", unavailable)
	}
	return nil
}

// OpenCircuits lists the hosts whose circuit breaker is open or half-open.
func (r *Runner) OpenCircuits() []OpenCircuit { return r.breaker.open() }
