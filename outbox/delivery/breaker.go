package delivery

import (
	"sort"
	"sync"
	"time"
)

// Circuit breaker defaults, as Mastodon's Stoplight around each delivery and
// Fedify 2.3's outbound breaker: 10 consecutive failures open the circuit
// for 60 seconds.
const (
	DefaultBreakerThreshold = 10
	DefaultBreakerCoolOff   = 60 * time.Second
)

// breaker keeps one circuit per host (host:port) in memory. A circuit is
// closed (attempts go ahead), open (the host's deliveries are held until the
// cool-off ends, spending no retry), or half-open (the cool-off ended: one
// probe goes ahead; its success closes the circuit, its failure re-opens it).
// Only network errors and 5xx count as failures; a 429 means the host is
// alive and pacing us, and a 4xx is the host answering.
type breaker struct {
	threshold int
	coolOff   time.Duration

	mu    sync.Mutex
	hosts map[string]*circuit
}

type circuit struct {
	failures  int       // consecutive failures
	openUntil time.Time // zero while closed
	probing   bool      // half-open: the one probe is in flight
	probeAt   time.Time // when the probe started
}

func newBreaker(threshold int, coolOff time.Duration) *breaker {
	return &breaker{threshold: threshold, coolOff: coolOff, hosts: map[string]*circuit{}}
}

// admit decides whether an attempt to host may start now. If not, the
// delivery is to be held until holdUntil.
func (b *breaker) admit(host string, now time.Time) (ok bool, holdUntil time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.hosts[host]
	switch {
	case c == nil || c.openUntil.IsZero():
		return true, time.Time{}
	case now.Before(c.openUntil):
		return false, c.openUntil
	case c.probing && now.Sub(c.probeAt) < probeHold:
		// Half-open with the probe still out: wait for its verdict, at
		// most one request timeout.
		return false, c.probeAt.Add(probeHold)
	default:
		// Half-open: this attempt is the probe. (A probe that never
		// reported, cut short by a shutdown, is replaced after probeHold.)
		c.probing, c.probeAt = true, now
		return true, time.Time{}
	}
}

// probeHold is how long deliveries wait while a half-open probe is out: the
// longest an attempt can take.
const probeHold = 30 * time.Second

// record feeds an attempt's result to host's circuit. failed is a failure
// that counts (network error, 5xx); alive is any other HTTP answer or a
// success. It reports whether this result opened the circuit, and until when.
func (b *breaker) record(host string, failed, alive bool, now time.Time) (opened bool, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.hosts[host]
	switch {
	case failed:
		if c == nil {
			c = &circuit{}
			b.hosts[host] = c
		}
		c.failures++
		if c.probing || (c.openUntil.IsZero() && c.failures >= b.threshold) {
			c.probing = false
			c.openUntil = now.Add(b.coolOff)
			return true, c.openUntil
		}
	case alive && c != nil:
		// The host answered: close the circuit and forget the failures.
		delete(b.hosts, host)
	}
	return false, time.Time{}
}

// OpenCircuit describes a host whose circuit is not closed.
type OpenCircuit struct {
	Host      string
	OpenUntil time.Time
	Probing   bool
	Failures  int
}

// open lists the hosts whose circuit is open or half-open, by host.
func (b *breaker) open() []OpenCircuit {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []OpenCircuit
	for h, c := range b.hosts {
		if !c.openUntil.IsZero() {
			out = append(out, OpenCircuit{Host: h, OpenUntil: c.openUntil, Probing: c.probing, Failures: c.failures})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}
