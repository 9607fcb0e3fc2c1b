package policy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Source is where a Live reads the policy from: the store.
type Source interface {
	// PolicyVersion is the version the policy's tables are at.
	PolicyVersion(ctx context.Context) (int64, error)
	// PolicyRows reads everything the policy is made of, at one version.
	PolicyRows(ctx context.Context) (Rows, error)
}

// committer is what a Source may offer besides: a count of the write
// transactions it committed, so a Live in the same process checks the
// version after every commit, not only every MaxAge.
type committer interface{ Commits() uint64 }

// DefaultMaxAge is the longest a Live goes without asking the database
// whether the policy changed: the bound on how late a change made by
// another process is seen when no wake-up reached this one.
const DefaultMaxAge = time.Second

// Live is the federation policy of one process, kept current. Get is
// cheap (no query) while nothing can have changed, one primary-key read
// when something may have, and a full read only when the version moved.
type Live struct {
	src     Source
	maxAge  time.Duration
	commits func() uint64

	mu        sync.Mutex // held while checking the version and reading
	cur       atomic.Pointer[Policy]
	checkedAt atomic.Int64  // unix nanoseconds of the last version check
	checkedAs atomic.Uint64 // the commit count at the last check
	stale     atomic.Bool   // a wake-up: check at the next Get

	onChange []func(old, cur *Policy)

	inMu sync.Mutex
	inTx *compiled // GetIn's last compile (compileIn)
}

// NewLive makes a Live reading from src, checking at least every maxAge
// (0: DefaultMaxAge). It reads nothing until the first Get.
func NewLive(src Source, maxAge time.Duration) *Live {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	l := &Live{src: src, maxAge: maxAge}
	if c, ok := src.(committer); ok {
		l.commits = c.Commits
	}
	return l
}

// OnChange calls f, in the goroutine of the Get that noticed, each time the
// policy is read at a new version (not for the first read). Register
// before the first Get.
func (l *Live) OnChange(f func(old, cur *Policy)) { l.onChange = append(l.onChange, f) }

// Invalidate says the policy may have changed (another process woke this
// one): the next Get checks the version.
func (l *Live) Invalidate() { l.stale.Store(true) }

// Get returns the current policy. It fails only when no policy was ever
// read; once one was, a database that cannot be asked leaves the last one
// in force (it was right a moment ago), and callers that get an error
// refuse every host.
func (l *Live) Get(ctx context.Context) (*Policy, error) {
	if p := l.cur.Load(); p != nil && !l.due() {
		return p, nil
	}
	l.mu.Lock()
	p := l.cur.Load()
	if p != nil && !l.due() {
		l.mu.Unlock()
		return p, nil // another Get checked meanwhile
	}
	var commits uint64
	if l.commits != nil {
		commits = l.commits()
	}
	l.stale.Store(false)
	next, err := l.read(ctx, p)
	if err != nil {
		l.mu.Unlock()
		if p != nil {
			return p, nil
		}
		return nil, err
	}
	l.checkedAt.Store(time.Now().UnixNano())
	l.checkedAs.Store(commits)
	changed := next != p
	l.cur.Store(next)
	l.mu.Unlock()
	if changed && p != nil {
		for _, f := range l.onChange {
			f(p, next)
		}
	}
	return next, nil
}

// GetIn is Get for a caller inside a database transaction, reading through
// src, that transaction, rather than the Live's own source: on PostgreSQL
// the transactions and the reads share one pool, and transactions that
// each held a connection while waiting for another would wait on each
// other until their deadline. What it reads does not become the Live's
// policy, since src may hold changes its transaction has not committed:
// while the policy is due for a check, it asks src the version (one
// primary-key read), and when that is not the version held, it compiles
// the rows once per version for every caller in the process (inTx), not
// once per call: every activity of an inbox and every fan-out would
// otherwise compile the whole policy until the Live's own Get caught up.
//
// A compile shared so may be of a transaction that then rolled back, and
// another may commit other rows under the same version; it stands only
// until the Live reads that version itself (within MaxAge, or at the next
// Get after a commit), the staleness Get already allows.
func (l *Live) GetIn(ctx context.Context, src Source) (*Policy, error) {
	p := l.cur.Load()
	if p != nil && !l.due() {
		return p, nil
	}
	v, err := src.PolicyVersion(ctx)
	switch {
	case err != nil && p != nil, p != nil && v == p.version:
		return p, nil // as Get: a database that cannot be asked leaves the last one
	case err != nil:
		return nil, err
	}
	next, err := l.compileIn(ctx, src, v)
	if err != nil {
		if p != nil {
			return p, nil
		}
		return nil, err
	}
	return next, nil
}

// compiled is one compile of the policy at a version, done once for every
// GetIn that asks for that version (single flight).
type compiled struct {
	version int64
	done    chan struct{} // closed when p or err is set
	p       *Policy
	err     error
}

// compileIn returns the policy at version v, compiling it from src's rows
// unless another GetIn compiled, or is compiling, that version.
func (l *Live) compileIn(ctx context.Context, src Source, v int64) (*Policy, error) {
	l.inMu.Lock()
	c := l.inTx
	if c != nil && c.version == v {
		l.inMu.Unlock()
		select {
		case <-c.done:
			return c.p, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c = &compiled{version: v, done: make(chan struct{})}
	l.inTx = c
	l.inMu.Unlock()
	rows, err := src.PolicyRows(ctx)
	if err == nil {
		c.p = Compile(rows)
	}
	c.err = err
	close(c.done)
	if err != nil {
		// Not kept: the next caller tries again.
		l.inMu.Lock()
		if l.inTx == c {
			l.inTx = nil
		}
		l.inMu.Unlock()
	}
	return c.p, err
}

// Fresh is Get with the version always asked (one primary-key read, made
// without holding anything other callers wait on): for the inbox, which
// must see a block or an allow that another process committed a moment
// ago, since what it refuses is dropped for good.
func (l *Live) Fresh(ctx context.Context) (*Policy, error) {
	p := l.cur.Load()
	if p == nil {
		return l.Get(ctx)
	}
	v, err := l.src.PolicyVersion(ctx)
	if err != nil || v == p.version {
		return p, nil // as Get: a database that cannot be asked leaves the last one
	}
	l.Invalidate()
	return l.Get(ctx)
}

// due reports whether the version must be checked before the current
// policy is used.
func (l *Live) due() bool {
	if l.stale.Load() || time.Since(time.Unix(0, l.checkedAt.Load())) >= l.maxAge {
		return true
	}
	return l.commits != nil && l.commits() != l.checkedAs.Load()
}

// read returns p if the database is still at its version, or the policy
// read afresh.
func (l *Live) read(ctx context.Context, p *Policy) (*Policy, error) {
	if p != nil {
		v, err := l.src.PolicyVersion(ctx)
		if err != nil {
			return nil, err
		}
		if v == p.version {
			return p, nil
		}
	}
	rows, err := l.src.PolicyRows(ctx)
	if err != nil {
		return nil, err
	}
	return Compile(rows), nil
}
