package queue

import (
	"context"
	"sync"
	"time"

	"herald/store"
)

// Spec defines a queue: what is its own. I is a claimed item (a row with
// what its work needs), R the result of working one.
type Spec[I, R any] struct {
	// Name names the queue in logs.
	Name string
	// Table is the queue's table, whose leases the runner renews and
	// expires (store.DeliveryLeases, ...). The zero value has none.
	Table store.LeaseTable

	// Claim leases due items as c allows (at most c.Limit, none of a
	// full key) to c.Owner until c.Now+c.Lease, and returns them.
	Claim func(ctx context.Context, c Claim) ([]I, error)
	// Key is what fairness goes by (a host, an endpoint): nil for none.
	Key func(I) string
	// Work does one item. stop is closed when the runner starts shutting
	// down: work still waiting for something gives up then and returns
	// Release's result. ctx ends when the drain time is over.
	Work func(ctx context.Context, item I, stop <-chan struct{}) R
	// Release is the result of an item handed back unworked, due at once.
	Release func(item I) R
	// Record writes a batch of results in one transaction (group
	// commit); nil when Work commits its own. A batch that fails stays
	// pending, its rows leased, and is written again.
	Record func(ctx context.Context, owner string, results []R) error
	// Again reports whether a result hands its row back to the queue
	// (a retry): the runner then looks at the queue again.
	Again func(R) bool
	// Finished, if set, is told of every item done or handed back, when
	// its result is pending.
	Finished func(item I, res R)
	// Due returns when the queue's next item is due (ok false when none
	// is), for the runner's sleep.
	Due func(ctx context.Context, now time.Time) (t time.Time, ok bool, err error)
	// Sweep, if set, deletes what the queue keeps no longer (finished
	// rows past their retention) and returns how many rows.
	Sweep func(ctx context.Context) (int64, error)

	// Cap bounds the items worked at once (default 1) and KeyCap those of
	// one key (default Cap). Held bounds the items claimed and not yet
	// finished (default Cap: an item waits for its slot in the runner, not
	// in the database) and KeyHeld those of one key (default Held).
	Cap, KeyCap, Held, KeyHeld int
}

// Claim is what a queue's Claim may take.
type Claim struct {
	Owner string
	Now   time.Time
	Lease time.Duration
	// Limit is the most items to claim.
	Limit int
	// Full lists the keys whose share is taken: claim none of theirs.
	Full []string
	// Room is how many more items of a key may be claimed.
	Room func(key string) int
}

// Queue is a queue added to a Runner.
type Queue struct {
	r    *Runner
	impl queueImpl
}

// Wake tells the queue's runner that items may be due. It never blocks.
func (q *Queue) Wake() { q.r.Wake() }

// Step works the queue's due items until none is left (Runner.Step).
func (q *Queue) Step(ctx context.Context) (int, error) { return q.r.Step(ctx, q) }

// queueImpl is what the runner does with a queue, whatever its types.
type queueImpl interface {
	claim(ctx, work context.Context, ru *run, now time.Time) (claimed, budget int)
	flush(ctx context.Context) error
	due(ctx context.Context, now time.Time) (time.Time, bool)
	maintain(ctx context.Context, now time.Time)
	sweep(ctx context.Context)
}

// Add adds the queue s defines to r. Call it before r runs.
func Add[I, R any](r *Runner, s Spec[I, R]) *Queue {
	setDefault(&s.Cap, 1)
	setDefault(&s.KeyCap, s.Cap)
	setDefault(&s.Held, s.Cap)
	setDefault(&s.KeyHeld, s.Held)
	q := &Queue{r: r, impl: &queueOf[I, R]{spec: s, r: r, slots: make(chan struct{}, s.Cap), perKey: map[string]int{}, keySlots: map[string]chan struct{}{}}}
	r.queues = append(r.queues, q)
	return q
}

// queueOf is a queue's state in its runner.
type queueOf[I, R any] struct {
	spec  Spec[I, R]
	r     *Runner
	slots chan struct{} // items being worked

	mu       sync.Mutex
	held     int                      // items claimed and not finished
	perKey   map[string]int           // of which, by key
	keySlots map[string]chan struct{} // items of a key being worked
	pending  []R                      // results not yet written
}

// claim claims what the caps allow and starts a worker per item. It
// returns how many it claimed, and how many it could have.
func (q *queueOf[I, R]) claim(ctx, work context.Context, ru *run, now time.Time) (int, int) {
	q.mu.Lock()
	budget := q.spec.Held - q.held
	var full []string
	if q.spec.Key != nil {
		for k, n := range q.perKey {
			if n >= q.spec.KeyHeld {
				full = append(full, k)
			}
		}
	}
	q.mu.Unlock()
	if budget <= 0 {
		return 0, budget
	}
	cfg := &q.r.cfg
	items, err := q.spec.Claim(ctx, Claim{Owner: cfg.Owner, Now: now, Lease: cfg.Lease, Limit: budget, Full: full, Room: q.room})
	if err != nil {
		if ctx.Err() == nil {
			cfg.Logger.Error("queue "+q.spec.Name+": claim", "err", err)
		}
		return 0, budget
	}
	q.mu.Lock()
	for _, it := range items {
		q.held++
		if q.spec.Key != nil {
			k := q.spec.Key(it)
			q.perKey[k]++
			if q.keySlots[k] == nil {
				q.keySlots[k] = make(chan struct{}, q.spec.KeyCap)
			}
		}
	}
	q.mu.Unlock()
	for _, it := range items {
		ru.workers.Add(1)
		go q.work(work, ru, it)
	}
	return len(items), budget
}

// room is how many more items of key the queue may claim.
func (q *queueOf[I, R]) room(key string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.spec.KeyHeld - q.perKey[key]
}

// work waits for the item's key slot and a slot of the queue, works the
// item, and records its result.
func (q *queueOf[I, R]) work(ctx context.Context, ru *run, it I) {
	defer ru.workers.Done()
	var key string
	var keySlot chan struct{}
	if q.spec.Key != nil {
		key = q.spec.Key(it)
		q.mu.Lock()
		keySlot = q.keySlots[key]
		q.mu.Unlock()
	}
	res, ok := q.slotted(ctx, ru, it, keySlot)
	if !ok {
		res = q.spec.Release(it)
	}
	q.mu.Lock()
	if q.spec.Record != nil {
		q.pending = append(q.pending, res)
	}
	q.held--
	if q.spec.Key != nil {
		if q.perKey[key]--; q.perKey[key] == 0 {
			delete(q.perKey, key)
			delete(q.keySlots, key)
		}
	}
	q.mu.Unlock()
	if q.spec.Finished != nil {
		q.spec.Finished(it, res)
	}
	signal(q.r.finished)
	if q.spec.Record != nil {
		signal(q.r.flush)
	}
}

// slotted works it once it holds its key's slot (if it has a key) and one
// of the queue's; ok is false when shutdown came first.
func (q *queueOf[I, R]) slotted(ctx context.Context, ru *run, it I, keySlot chan struct{}) (res R, ok bool) {
	for _, slots := range []chan struct{}{keySlot, q.slots} {
		if slots == nil {
			continue
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ru.stopping:
			return res, false
		}
	}
	// A select with both ready picks at random: a slot freed by an item
	// that stopped at shutdown must not start one that was waiting.
	select {
	case <-ru.stopping:
		return res, false
	default:
	}
	return q.spec.Work(ctx, it, ru.stopping), true
}

// flush writes the pending results in one batch.
func (q *queueOf[I, R]) flush(ctx context.Context) error {
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	q.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := q.spec.Record(ctx, q.r.cfg.Owner, batch); err != nil {
		q.mu.Lock()
		q.pending = append(batch, q.pending...)
		q.mu.Unlock()
		return err
	}
	// A row handed back may be due sooner than the runner's sleep, which
	// was computed while the row was still leased.
	if q.spec.Again != nil {
		for _, res := range batch {
			if q.spec.Again(res) {
				q.r.Wake()
				break
			}
		}
	}
	return nil
}

// due is when the queue's next item is due.
func (q *queueOf[I, R]) due(ctx context.Context, now time.Time) (time.Time, bool) {
	if q.spec.Due == nil {
		return time.Time{}, false
	}
	t, ok, err := q.spec.Due(ctx, now)
	return t, ok && err == nil
}

// maintain renews the leases the runner holds in the queue's table, and
// hands back the expired ones.
func (q *queueOf[I, R]) maintain(ctx context.Context, now time.Time) {
	t := q.spec.Table
	if t.Name == "" {
		return
	}
	cfg := &q.r.cfg
	q.mu.Lock()
	holding := q.held > 0 || len(q.pending) > 0
	q.mu.Unlock()
	if holding {
		if err := cfg.DB.RenewLeases(ctx, t, cfg.Owner, now.Add(cfg.Lease)); err != nil && ctx.Err() == nil {
			cfg.Logger.Error("queue "+q.spec.Name+": renew leases", "err", err)
		}
	}
	if n, err := cfg.DB.ExpireLeases(ctx, t, now); err != nil {
		if ctx.Err() == nil {
			cfg.Logger.Error("queue "+q.spec.Name+": expire leases", "err", err)
		}
	} else if n > 0 {
		cfg.Logger.Info("queue "+q.spec.Name+": expired leases returned to the queue", "rows", n)
	}
}

// sweep runs the queue's Sweep.
func (q *queueOf[I, R]) sweep(ctx context.Context) {
	if q.spec.Sweep == nil {
		return
	}
	if n, err := q.spec.Sweep(ctx); err != nil {
		if ctx.Err() == nil {
			q.r.cfg.Logger.Error("sweep finished "+q.spec.Name, "err", err)
		}
	} else if n > 0 {
		q.r.cfg.Logger.Info("swept finished "+q.spec.Name, "rows", n)
	}
}
