package inbox

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rate is how many inbox requests one remote host may make: a bucket of N
// tokens that refills at N per Per. Each request whose signature verified
// takes a token; a host whose bucket is empty is answered 429 with
// Retry-After. GoToSocial's default for its ActivityPub endpoints (its
// documentation's federation/ratelimiting and api/ratelimiting pages) is
// 300 requests per 5 minutes per client, and so is Herald's. The zero
// Rate limits nothing.
type Rate struct {
	N   int
	Per time.Duration
}

// DefaultRate is the rate `herald serve` applies unless told otherwise.
var DefaultRate = Rate{N: 300, Per: 5 * time.Minute}

// ParseRate reads a rate written N/DURATION ("300/5m"), or "0" for none.
func ParseRate(s string) (Rate, error) {
	if s == "0" {
		return Rate{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return Rate{}, errors.New("want N/DURATION, like 300/5m (or 0 for no limit)")
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return Rate{}, errors.New("want N/DURATION, like 300/5m (or 0 for no limit)")
	}
	return Rate{N: count, Per: d}, nil
}

// String writes the rate as ParseRate reads it.
func (r Rate) String() string {
	if r.N == 0 {
		return "0"
	}
	per := r.Per.String()
	if strings.HasSuffix(per, "m0s") {
		per = strings.TrimSuffix(per, "0s") // 5m, not 5m0s
	}
	if strings.HasSuffix(per, "h0m") {
		per = strings.TrimSuffix(per, "0m")
	}
	return fmt.Sprintf("%d/%s", r.N, per)
}

// RateLimit holds a token bucket per remote host (the host of the keyId).
// Only a request whose signature verified takes a token, so a sender who
// names someone else's key cannot spend that server's tokens; a host whose
// bucket is empty is refused from the headers alone, before its body is
// read. The hosts of one registrable domain also share a bucket of
// DomainRateFactor times a host's (host.Name's Registrable), so throwaway
// names under one wildcard domain get one rate between them. Use
// NewRateLimit; a nil RateLimit limits nothing.
type RateLimit struct {
	burst float64 // tokens a full bucket holds
	rate  float64 // tokens added per second

	mu    sync.Mutex
	hosts map[string]*bucket
	// domains holds the registrable domains' buckets (nil inside it).
	domains *RateLimit
}

// DomainRateFactor is how many hosts' rates the hosts of one registrable
// domain share.
const DomainRateFactor = 4

type bucket struct {
	tokens float64
	at     time.Time // when tokens was computed
}

// NewRateLimit makes the buckets of r, or nil for the zero Rate.
func NewRateLimit(r Rate) *RateLimit {
	if r.N <= 0 || r.Per <= 0 {
		return nil
	}
	l := &RateLimit{burst: float64(r.N), rate: float64(r.N) / r.Per.Seconds(), hosts: map[string]*bucket{}}
	l.domains = &RateLimit{burst: l.burst * DomainRateFactor, rate: l.rate * DomainRateFactor, hosts: map[string]*bucket{}}
	return l
}

// level returns host's bucket brought up to now. Called with l.mu held.
func (l *RateLimit) level(host string, now time.Time) *bucket {
	b := l.hosts[host]
	if b == nil {
		if len(l.hosts) >= maxHosts {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.hosts[host] = b
		return b
	}
	if now.After(b.at) {
		b.tokens = min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
		b.at = now
	}
	return b
}

// prune forgets the buckets that are full again (no entry means a full
// bucket), and if that is not enough, all of them: forgetting a host's
// debt is better than growing without bound. Called with l.mu held.
func (l *RateLimit) prune(now time.Time) {
	for host, b := range l.hosts {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.hosts, host)
		}
	}
	if len(l.hosts) >= maxHosts {
		clear(l.hosts)
	}
}

// wait is how long until b holds a whole token, rounded up to the
// millisecond.
func (l *RateLimit) wait(b *bucket) time.Duration {
	return time.Duration(math.Ceil((1-b.tokens)/l.rate*1000)) * time.Millisecond
}

// allows reports whether host has a token now, without taking it, and if
// not how long until it has one.
func (l *RateLimit) allows(host string, now time.Time) (bool, time.Duration) {
	return l.try(host, now, false)
}

// take takes a token for a verified request of host, or reports how long
// until there is one.
func (l *RateLimit) take(host string, now time.Time) (bool, time.Duration) {
	return l.try(host, now, true)
}

func (l *RateLimit) try(host string, now time.Time, spend bool) (bool, time.Duration) {
	if l == nil || host == "" {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.level(host, now)
	if b.tokens < 1 {
		return false, l.wait(b)
	}
	if d := l.domains; d != nil {
		// The domain's bucket is checked (and spent) under the host's
		// lock, so the two move together.
		if ok, wait := d.try(domainOf(host), now, spend); !ok {
			return false, wait
		}
	}
	if spend {
		b.tokens--
	}
	return true, 0
}
