package queue_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"herald/federation"
	"herald/internal/fedtest"
	"herald/internal/pgtest"
	"herald/queue"
	"herald/store"
)

// item is a claimed row of the in-memory queues below.
type item struct {
	id  int
	key string
}

// memQueue is a queue held in memory: what the runner does with a Spec
// without a table.
type memQueue struct {
	mu      sync.Mutex
	due     []item
	claims  []queue.Claim
	rooms   []int // Room("slow") at each claim
	batches [][]int
	written chan int // each id written, in order
}

func newMemQueue(items ...item) *memQueue {
	return &memQueue{due: items, written: make(chan int, len(items))}
}

// claim hands out due items as c allows: at most c.Limit, each key to its
// room.
func (m *memQueue) claim(_ context.Context, c queue.Claim) ([]item, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = append(m.claims, c)
	m.rooms = append(m.rooms, c.Room("slow"))
	var out, left []item
	taken := map[string]int{}
	for _, it := range m.due {
		if len(out) < c.Limit && !slices.Contains(c.Full, it.key) && c.Room(it.key)-taken[it.key] > 0 {
			out = append(out, it)
			taken[it.key]++
		} else {
			left = append(left, it)
		}
	}
	m.due = left
	return out, nil
}

func (m *memQueue) record(_ context.Context, _ string, batch []int) error {
	m.mu.Lock()
	m.batches = append(m.batches, batch)
	m.mu.Unlock()
	for _, id := range batch {
		m.written <- id
	}
	return nil
}

func (m *memQueue) spec(work func(ctx context.Context, it item, stop <-chan struct{}) int) queue.Spec[item, int] {
	return queue.Spec[item, int]{
		Name:    "test",
		Claim:   m.claim,
		Key:     func(it item) string { return it.key },
		Work:    work,
		Release: func(it item) int { return -it.id },
		Record:  m.record,
	}
}

// TestResultsWrittenAsTheyComplete: a result is written as soon as its
// item is done, not when the work claimed with it is: while one item
// hangs, the others' results are committed.
func TestResultsWrittenAsTheyComplete(t *testing.T) {
	m := newMemQueue(item{1, "a"}, item{2, "b"}, item{3, "c"})
	hang := make(chan struct{})
	r := queue.New(queue.Config{})
	s := m.spec(func(ctx context.Context, it item, _ <-chan struct{}) int {
		if it.id == 1 {
			<-hang
		}
		return it.id
	})
	s.Cap = 3
	queue.Add(r, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()

	got := []int{<-m.written, <-m.written}
	slices.Sort(got)
	if !slices.Equal(got, []int{2, 3}) {
		t.Errorf("written while item 1 hangs: %v, want [2 3]", got)
	}
	close(hang)
	if id := <-m.written; id != 1 {
		t.Errorf("then %d, want 1", id)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestShutdownHandsBack: at shutdown, an item still waiting for its slot
// is handed back (its Release result written), and one being worked is
// told to stop and written with what it returned.
func TestShutdownHandsBack(t *testing.T) {
	m := newMemQueue(item{1, "a"}, item{2, "a"})
	started := make(chan struct{})
	r := queue.New(queue.Config{})
	s := m.spec(func(ctx context.Context, it item, stop <-chan struct{}) int {
		close(started)
		<-stop
		return 100 + it.id
	})
	s.Held = 2 // both claimed, one worked at a time
	queue.Add(r, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Which of the two got the slot first is up to the scheduler.
	got := []int{<-m.written, <-m.written}
	slices.Sort(got)
	if got[0] >= 0 || got[1] <= 100 || -got[0]+got[1]-100 != 3 {
		t.Errorf("written at shutdown: %v, want one handed back (-id) and one stopped (100+id)", got)
	}
}

// TestKeyCaps: the queue's caps are the runner's policy: no more than
// KeyCap items of one key worked at once nor Cap in all, no more than
// KeyHeld of a key claimed nor Held in all; every item is worked.
func TestKeyCaps(t *testing.T) {
	var items []item
	for i := range 12 {
		items = append(items, item{i, "slow"})
	}
	items = append(items, item{12, "other"}, item{13, "other"})
	m := newMemQueue(items...)
	var mu sync.Mutex
	working := map[string]int{}
	total, maxTotal := 0, 0
	maxKey := map[string]int{}
	r := queue.New(queue.Config{})
	s := m.spec(func(ctx context.Context, it item, _ <-chan struct{}) int {
		mu.Lock()
		working[it.key]++
		total++
		maxKey[it.key] = max(maxKey[it.key], working[it.key])
		maxTotal = max(maxTotal, total)
		mu.Unlock()
		time.Sleep(time.Millisecond) // let the others pile up (not a timing assertion)
		mu.Lock()
		working[it.key]--
		total--
		mu.Unlock()
		return it.id
	})
	s.Cap, s.KeyCap, s.Held, s.KeyHeld = 3, 2, 6, 4
	q := queue.Add(r, s)
	n, err := q.Step(context.Background())
	if err != nil || n != len(items) {
		t.Fatalf("Step: %d, %v; want %d", n, err, len(items))
	}
	if maxKey["slow"] > 2 || maxKey["other"] > 2 || maxTotal > 3 {
		t.Errorf("worked at once: %v of a key, %d in all; want at most 2 and 3", maxKey, maxTotal)
	}
	if first := m.claims[0]; first.Limit != 6 || m.rooms[0] != 4 || len(first.Full) != 0 {
		t.Errorf("first claim: limit %d, room %d, full %v; want 6, 4, none", first.Limit, m.rooms[0], first.Full)
	}
	if len(m.batches) == 0 || len(m.batches[0]) != 6 {
		t.Errorf("batches %v: the first claim's 6 items are not one batch (4 slow, 2 other)", m.batches)
	}
}

// TestTakeoverAfterStaleHeartbeat: on one database, a process whose last
// heartbeat is StaleAfter old still holds its lease; a moment older, the
// next beat of another process's runner hands it back and that runner
// works it. The clock is injected: nothing here waits for real time to
// pass, and the bound it shows is Heartbeat + StaleAfter after the last
// beat (node.HeartbeatInterval + node.StaleAfter, within 5 s).
func TestTakeoverAfterStaleHeartbeat(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, pgtest.Target(t, pgtest.Engine()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	actor := &store.Actor{Name: "alice", Type: "Person", PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := db.CreateActor(ctx, actor, store.NewToken()); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	const stale = 3 * time.Second
	var clock atomic.Int64
	clock.Store(t0.UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()).UTC() }
	for _, id := range []string{"dead", "alive"} {
		if err := db.RegisterProcess(ctx, store.Process{ID: id, Hostname: "h", PID: 1, StartedAt: t0, HeartbeatAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	id, err := db.AddJob(ctx, "test", actor.ID, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if j, err := db.ClaimJob(ctx, "dead", t0, time.Hour); err != nil || j.ID != id {
		t.Fatalf("the dead process's claim: %+v %v", j, err)
	}

	// The store's rule, by heartbeat age.
	if got, err := db.ReclaimStale(ctx, t0, t0.Add(stale)); err != nil || got.Total() != 0 {
		t.Errorf("at an age of exactly %v: reclaimed %v, %v; want nothing", stale, got, err)
	}
	if j, _ := db.JobByID(ctx, id); j.State != store.JobRunning {
		t.Fatalf("job %s", j.State)
	}

	// The runner's: it beats (for real, every millisecond) at the clock's
	// time, and after each beat reclaims what is stale at that time.
	worked := make(chan int64, 1)
	r := queue.New(queue.Config{DB: db, Owner: "alive", Now: now, Heartbeat: time.Millisecond, StaleAfter: stale})
	queue.Add(r, queue.Spec[*store.Job, int64]{
		Name:  "jobs",
		Table: store.JobLeases,
		Claim: func(ctx context.Context, c queue.Claim) ([]*store.Job, error) {
			j, err := db.ClaimJob(ctx, c.Owner, c.Now, c.Lease)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil
			}
			return []*store.Job{j}, err
		},
		Work:    func(_ context.Context, j *store.Job, _ <-chan struct{}) int64 { worked <- j.ID; return j.ID },
		Release: func(j *store.Job) int64 { return 0 },
		Due:     func(ctx context.Context, _ time.Time) (time.Time, bool, error) { return db.NextJob(ctx) },
	})
	clock.Store(t0.Add(stale).UnixMilli())
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- r.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// It has beaten at the clock's time: the dead one's age is StaleAfter.
	fedtest.WaitFor(t, func() bool { return heartbeat(t, db, "alive").Equal(t0.Add(stale)) })
	// Let it beat and reclaim a few more times at that age (a pause that
	// can only make this check miss a fault, never fail wrongly).
	time.Sleep(50 * time.Millisecond)
	select {
	case <-worked:
		t.Fatal("the runner took a lease whose owner beat StaleAfter ago")
	default:
	}
	clock.Store(t0.Add(stale + time.Millisecond).UnixMilli())
	if got := <-worked; got != id {
		t.Errorf("worked job %d, want %d", got, id)
	}
	if procs, _ := db.Processes(ctx); len(procs) != 1 || procs[0].ID != "alive" {
		t.Errorf("processes after the takeover: %+v; want the dead one forgotten", procs)
	}
}

// heartbeat is when process id last beat.
func heartbeat(t *testing.T, db *store.DB, id string) time.Time {
	t.Helper()
	procs, err := db.Processes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.ID == id {
			return p.HeartbeatAt
		}
	}
	return time.Time{}
}
