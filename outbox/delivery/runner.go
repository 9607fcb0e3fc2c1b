// Package delivery is Herald's durable delivery scheduler: every queued
// (activity, inbox) row in the database reaches its server, through
// restarts, outages and dead servers.
//
// A Runner defines two queues of the queue runner (package queue), which
// claims, leases, runs, retries and writes back for them: federation
// deliveries and apps' webhooks (webhook.go). What is the deliveries' own is
// here: their claim by lane, skipping hosts whose share is taken, their
// per-host fairness (a cap on the requests to one host, as the queue's key
// cap), a global cap on the requests being signed and sent, each attempt
// signed afresh (draft-cavage, and RFC 9421 on a 400 or 401:
// "double-knocking"; RFC 9421, with Ed25519 where it can, only for hosts that
// showed evidence that they verify it: knocks.go), the federation policy
// asked when a row is due (judge.go), the answer classified as Mastodon does
// (schedule.go), and failing hosts shed twice over: a per-host circuit
// breaker reacts in seconds, the unavailable-domain tracker in days. The
// retry schedule is queue.RetryDelay.
package delivery

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"herald/federation"
	"herald/policy"
	"herald/queue"
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
	PerHostCap  int // requests in flight to one host (default 4)

	// Queues is the queue runner the deliveries and webhooks are queues
	// of: the node's, shared with the jobs and the followers syncs. nil
	// makes one of the Runner's own (tests, benchmarks) from Owner, Lease,
	// MaxIdle and DrainTimeout (see queue.Config).
	Queues       *queue.Runner
	Owner        string
	Lease        time.Duration
	MaxIdle      time.Duration
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
	setDefault(&c.RetryScale, 1)
	if c.Queues == nil {
		c.Queues = queue.New(queue.Config{DB: c.DB, Owner: c.Owner, Logger: c.Logger, Now: c.Now, Lease: c.Lease,
			MaxIdle: c.MaxIdle, DrainTimeout: c.DrainTimeout})
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

// Runner sends queued deliveries and webhooks. Create it with New; it
// runs in its queue runner (Config.Queues), or on its own with Run (the
// benchmarks) or Step (tests).
type Runner struct {
	cfg     Config
	breaker *breaker
	global  chan struct{} // slots for requests being signed and sent
	// signers bounds the signatures computed at once to the cores: an RSA
	// signature is all CPU, and a fan-out that signs on every goroutine
	// it has keeps the queue runner's result commits and heartbeats
	// waiting for a core.
	signers chan struct{}
	keys    keyCache
	bodies  bodyCache
	low     atomic.Int64 // rows of the low lane claimed and not finished

	deliveries *queue.Queue
	webhooks   *queue.Queue // nil without a webhook client
	wh         webhookLane  // webhook.go
}

// New creates a Runner and adds its queues to its queue runner.
func New(cfg Config) *Runner {
	cfg.defaults()
	if cfg.Signatures == nil {
		cfg.Signatures = NewSignatures(cfg.DB, nil, cfg.Logger, cfg.Now)
	}
	r := &Runner{
		cfg:     cfg,
		breaker: newBreaker(cfg.BreakerThreshold, cfg.BreakerCoolOff),
		global:  make(chan struct{}, cfg.GlobalCap),
		signers: make(chan struct{}, runtime.GOMAXPROCS(0)),
		wh:      newWebhookLane(cfg.Webhooks),
	}
	r.keys = keyCache{db: cfg.DB, inst: cfg.Instance, now: cfg.Now, keys: map[int64]cachedKey{}, epoch: map[int64]int{}}
	r.bodies = bodyCache{db: cfg.DB, inst: cfg.Instance, items: map[int64]activityBody{}}
	r.deliveries = queue.Add(cfg.Queues, queue.Spec[store.Claimed, store.DeliveryResult]{
		Name:     "deliveries",
		Table:    store.DeliveryLeases,
		Claim:    r.claim,
		Key:      func(c store.Claimed) string { return c.Host },
		Work:     r.process,
		Release:  r.release,
		Record:   r.record,
		Again:    func(res store.DeliveryResult) bool { return res.State == store.DeliveryQueued },
		Finished: r.finished,
		Due:      r.nextDue,
		Sweep:    cfg.DB.SweepDeliveries,
		// Enough rows held to keep every in-flight slot busy with a batch
		// in hand, few enough that a crash returns little to the queue
		// late; and a slow host cannot take the whole claim budget.
		Cap: cfg.MaxInFlight, KeyCap: cfg.PerHostCap,
		Held: cfg.MaxInFlight + cfg.GlobalCap*4, KeyHeld: cfg.PerHostCap * 4,
	})
	r.webhooks = r.addWebhooks(cfg.Queues)
	cfg.Metrics.runner = r
	cfg.Policy.OnChange(func(old, cur *policy.Policy) { go r.releaseHeld(old, cur) })
	return r
}

// lowCap bounds the low lane's share of the rows held: it never takes the
// capacity the normal lane needs.
func (r *Runner) lowCap() int { return max(1, r.cfg.GlobalCap/4) }

// ForgetKey makes the runner sign the actor's next deliveries with the key
// the database holds now: call it once a key rotation committed.
func (r *Runner) ForgetKey(actorID int64) { r.keys.forget(actorID) }

// Wake tells the runner that deliveries (or webhooks) were enqueued. Call
// it after the enqueuing transaction committed. It never blocks.
func (r *Runner) Wake() { r.deliveries.Wake() }

// Run runs the runner's queue runner until ctx is cancelled, then shuts
// down gracefully (queue.Runner.Run): for a Runner that has one of its own.
func (r *Runner) Run(ctx context.Context) error { return r.cfg.Queues.Run(ctx) }

// Step claims every due delivery and webhook the caps allow, runs them, and
// writes their results before returning how many it ran. Tests drive the
// runner with it (and an injected clock) instead of Run.
func (r *Runner) Step(ctx context.Context) (int, error) {
	if r.webhooks == nil {
		return r.cfg.Queues.Step(ctx, r.deliveries)
	}
	return r.cfg.Queues.Step(ctx, r.deliveries, r.webhooks)
}

// claim claims due rows for both lanes within what c allows: the normal
// lane first, the low lane within its share, neither more of a host than
// the host's share leaves (so one host's backlog cannot fill the claim
// while other hosts' rows wait).
func (r *Runner) claim(ctx context.Context, c queue.Claim) ([]store.Claimed, error) {
	// Asking is what notices a change another process made, which makes
	// the deliveries the policy held due again (releaseHeld).
	r.cfg.Policy.Get(ctx)
	dc := store.DeliveryClaim{Owner: c.Owner, Lane: store.LaneNormal, Limit: c.Limit, Exclude: c.Full, Room: c.Room, Now: c.Now, Lease: c.Lease}
	rows, err := r.cfg.DB.ClaimDeliveries(ctx, dc)
	if err != nil {
		return nil, err
	}
	taken := map[string]int{}
	for _, row := range rows {
		taken[row.Host]++
	}
	dc.Lane = store.LaneLow
	dc.Limit = min(c.Limit-len(rows), r.lowCap()-int(r.low.Load()))
	dc.Room = func(host string) int { return c.Room(host) - taken[host] }
	low, err := r.cfg.DB.ClaimDeliveries(ctx, dc)
	if err != nil {
		// The normal lane's rows are claimed: run them.
		r.cfg.Logger.Error("delivery: claim the low lane", "err", err)
		return rows, nil
	}
	r.low.Add(int64(len(low)))
	return append(rows, low...), nil
}

// finished counts a row of the low lane out of its share.
func (r *Runner) finished(c store.Claimed, _ store.DeliveryResult) {
	if c.Lane == store.LaneLow {
		r.low.Add(-1)
	}
}

// nextDue is when the next delivery of either lane is due.
func (r *Runner) nextDue(ctx context.Context, _ time.Time) (time.Time, bool, error) {
	var next time.Time
	var any bool
	for _, lane := range []int{store.LaneNormal, store.LaneLow} {
		due, ok, err := r.cfg.DB.NextDue(ctx, lane)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok && (!any || due.Before(next)) {
			next, any = due, true
		}
	}
	return next, any, nil
}

// record writes a batch of delivery results (group commit).
func (r *Runner) record(ctx context.Context, owner string, batch []store.DeliveryResult) error {
	unavailable, err := r.cfg.DB.ApplyDeliveryResults(ctx, owner, batch, r.cfg.Now())
	if err != nil {
		return err
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
