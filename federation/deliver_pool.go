package federation

import (
	"context"
	"sync"
	"time"
)

// pool holds the delivery transport's idle connections and its per-host
// slots. Nothing in it runs while it is idle: no goroutine per connection,
// and one timer for the oldest idle connection's expiry.
//
// When the pool is full, a connection coming back is closed and the idle
// ones stay. A fan-out reaches its hosts in much the same order every time;
// closing the least recently used instead (net/http's rule) closes exactly
// the connections the next fan-out needs first, so a fan-out to more hosts
// than the pool holds would reuse none of them (docs/PERFORMANCE.md, issue
// 29, run 1). Keeping the incumbents reuses a pool's worth; the idle
// timeout retires those no longer used.
type pool struct {
	mu    sync.Mutex
	hosts map[string]*hostConns
	// The idle list, most recently returned first: every idle connection,
	// in the order of their expiry from the tail.
	head, tail *pconn
	idle       int
	timer      *time.Timer
	timerAt    time.Time
	now        func() time.Time
}

// hostConns is one host's idle connections (most recent last) and slots.
type hostConns struct {
	idle    []*pconn
	active  int             // slots held: requests under way
	waiters []chan struct{} // requests waiting for a slot, in order
}

func (p *pool) init() {
	p.hosts = make(map[string]*hostConns)
	p.now = time.Now
}

// acquire takes one of key's slots (waiting for one while perHost are
// held) and returns the most recently idle connection that ok accepts,
// or nil when there is none: the caller connects. The slot is given back
// with release.
func (d *deliverer) acquire(ctx context.Context, key string, ok func(*pconn) bool) (*pconn, error) {
	p := &d.pool
	p.mu.Lock()
	h := p.hosts[key]
	if h == nil {
		h = &hostConns{}
		p.hosts[key] = h
	}
	if h.active < d.perHost {
		h.active++
	} else {
		ch := make(chan struct{})
		h.waiters = append(h.waiters, ch)
		p.mu.Unlock()
		select {
		case <-ch: // release handed its slot over
		case <-ctx.Done():
			p.mu.Lock()
			if i := indexOf(h.waiters, ch); i >= 0 {
				h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
				p.mu.Unlock()
			} else { // handed over meanwhile: give it on
				p.mu.Unlock()
				d.release(key, nil)
			}
			return nil, ctx.Err()
		}
		p.mu.Lock()
	}
	var stale []*pconn
	var pc *pconn
	for len(h.idle) > 0 {
		c := h.idle[len(h.idle)-1]
		h.idle = h.idle[:len(h.idle)-1]
		p.unlink(c)
		if ok == nil || ok(c) {
			pc = c
			break
		}
		stale = append(stale, c)
	}
	p.mu.Unlock()
	d.stats.dead.Add(int64(len(stale)))
	for _, c := range stale {
		c.conn.Close()
	}
	return pc, nil
}

// release gives key's slot back, to the first waiter if there is one, and
// pools pc if it is not nil and the pool has room (else closes it).
func (d *deliverer) release(key string, pc *pconn) {
	p := &d.pool
	p.mu.Lock()
	h := p.hosts[key]
	if pc != nil && p.idle < d.maxIdle && len(h.idle) < d.perHost {
		pc.idleSince = p.now()
		h.idle = append(h.idle, pc)
		p.pushFront(pc)
		p.arm(pc.idleSince.Add(d.idleTTL), d)
		pc = nil
	}
	if len(h.waiters) > 0 {
		ch := h.waiters[0]
		h.waiters = h.waiters[1:]
		close(ch)
	} else {
		h.active--
		if h.active == 0 && len(h.idle) == 0 {
			delete(p.hosts, key)
		}
	}
	p.mu.Unlock()
	if pc != nil {
		d.stats.full.Add(1)
		pc.conn.Close()
	}
}

// indexOf is the position of ch in chs, or -1.
func indexOf(chs []chan struct{}, ch chan struct{}) int {
	for i, c := range chs {
		if c == ch {
			return i
		}
	}
	return -1
}

// pushFront puts c at the head of the idle list.
func (p *pool) pushFront(c *pconn) {
	c.prev, c.next = nil, p.head
	if p.head != nil {
		p.head.prev = c
	} else {
		p.tail = c
	}
	p.head = c
	p.idle++
}

// unlink takes c out of the idle list.
func (p *pool) unlink(c *pconn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		p.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		p.tail = c.prev
	}
	c.prev, c.next = nil, nil
	p.idle--
}

// arm makes sure the expiry timer fires no later than at (p.mu held).
func (p *pool) arm(at time.Time, d *deliverer) {
	if !p.timerAt.IsZero() {
		// Armed for an earlier expiry (the list is in expiry order): the
		// sweep then re-arms for the rest.
		return
	}
	p.timerAt = at
	wait := max(at.Sub(p.now()), 0)
	if p.timer == nil {
		p.timer = time.AfterFunc(wait, d.sweep)
	} else {
		p.timer.Reset(wait)
	}
}

// sweep closes the connections idle for longer than the idle timeout and
// re-arms the timer for the next one to expire.
func (d *deliverer) sweep() {
	p := &d.pool
	p.mu.Lock()
	p.timerAt = time.Time{}
	now := p.now()
	var expired []*pconn
	for c := p.tail; c != nil && !c.idleSince.Add(d.idleTTL).After(now); c = p.tail {
		p.unlink(c)
		p.dropIdle(c)
		expired = append(expired, c)
	}
	if p.tail != nil {
		p.arm(p.tail.idleSince.Add(d.idleTTL), d)
	}
	p.mu.Unlock()
	d.stats.expired.Add(int64(len(expired)))
	for _, c := range expired {
		c.conn.Close()
	}
}

// dropIdle removes c from its host's idle connections (p.mu held; c is
// already off the idle list).
func (p *pool) dropIdle(c *pconn) {
	h := p.hosts[c.key]
	if h == nil {
		return
	}
	for i, x := range h.idle {
		if x == c {
			h.idle = append(h.idle[:i], h.idle[i+1:]...)
			break
		}
	}
	if h.active == 0 && len(h.idle) == 0 {
		delete(p.hosts, c.key)
	}
}

// closeIdle closes every idle connection (shutdown, tests).
func (d *deliverer) closeIdle() {
	p := &d.pool
	p.mu.Lock()
	var all []*pconn
	for c := p.tail; c != nil; c = p.tail {
		p.unlink(c)
		p.dropIdle(c)
		all = append(all, c)
	}
	p.mu.Unlock()
	for _, c := range all {
		c.conn.Close()
	}
}

// idleCount is how many connections are idle (tests).
func (d *deliverer) idleCount() int {
	d.pool.mu.Lock()
	defer d.pool.mu.Unlock()
	return d.pool.idle
}
