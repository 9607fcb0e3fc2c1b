package federation

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The delivery transport's pool: per-host slots, the bound across hosts
// and the idle timeout, against real loopback servers.

// TestDeliverPerHostBound: no more than MaxConnsPerHost requests are open
// to one host; the others wait for a slot.
func TestDeliverPerHostBound(t *testing.T) {
	var open, most atomic.Int64
	release := make(chan struct{})
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := open.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		open.Add(-1)
		w.WriteHeader(http.StatusAccepted)
	}))
	c := openClient(s.Listener.Addr().String(), ClientOptions{MaxConnsPerHost: 2})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := post(t, c, context.Background(), "http://h1.invalid/inbox", "{}"); err != nil {
				t.Error(err)
			}
		}()
	}
	for waiting := 0; waiting < 2; time.Sleep(time.Millisecond) { // two hold the slots, two wait
		c.dl.pool.mu.Lock()
		if h := c.dl.pool.hosts["http://h1.invalid:80"]; h != nil {
			waiting = len(h.waiters)
		}
		c.dl.pool.mu.Unlock()
	}
	close(release)
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d requests open at once, want 2", m)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestDeliverIdlePool: a full pool keeps the connections it has and
// closes the one coming back; the idle timeout closes them.
func TestDeliverIdlePool(t *testing.T) {
	s := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	c := openClient(s.Listener.Addr().String(), ClientOptions{MaxIdleConns: 2})
	now := time.Unix(1_800_000_000, 0)
	c.dl.pool.now = func() time.Time { return now }
	visit := func(h int) {
		t.Helper()
		if _, err := post(t, c, context.Background(), fmt.Sprintf("http://h%d.invalid/inbox", h), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	for h := range 4 {
		visit(h)
	}
	if n := s.conns.Load(); n != 4 {
		t.Fatalf("4 hosts: %d connections", n)
	}
	visit(0) // kept: the pool was full when 2 and 3 came back
	visit(1)
	if n := s.conns.Load(); n != 4 {
		t.Errorf("the first hosts connected again: %d connections, want 4", n)
	}
	visit(3) // closed when it came back
	if n := s.conns.Load(); n != 5 {
		t.Errorf("a host over the pool's bound: %d connections, want 5", n)
	}
	now = now.Add(deliveryIdleTimeout - time.Second)
	c.dl.sweep()
	if n := c.dl.idleCount(); n != 2 {
		t.Errorf("before the idle timeout: %d idle connections, want 2", n)
	}
	now = now.Add(time.Second)
	c.dl.sweep()
	if n := c.dl.idleCount(); n != 0 {
		t.Errorf("after the idle timeout: %d idle connections", n)
	}
	visit(0)
	if n := s.conns.Load(); n != 6 {
		t.Errorf("after the idle timeout: %d connections, want 6", n)
	}
	if st, want := c.DeliveryStats(), (DeliveryStats{Reused: 2, Dialed: 6, Full: 3, Expired: 2}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}
