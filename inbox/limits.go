package inbox

import (
	"context"
	"sync"
	"time"

	"herald/federation"
	"herald/host"
)

// Capacity defaults (NewLimits). Every accepted request ends in a write to
// the one SQLite writer, so more in parallel only queue there, holding
// memory; past the bound a sender is asked to come back later.
const (
	// DefaultConcurrency is how many inbox requests are processed at once.
	DefaultConcurrency = 128
	// DefaultHostShare is how many of them may come from one key host (the
	// host of the keyId a request names, before anything is verified), so
	// that no single server, honest or not, can take the inbox from the
	// others.
	DefaultHostShare = 16
	// DefaultFetchSlots is how many of them may be waiting on a key fetch,
	// and DefaultHostFetches how many of those for one key host: requests
	// whose keys are cached always have the rest, and never wait behind a
	// fetch. A key fetch is a request to the key's host, so a host gets as
	// many as the client opens to one host: more would only wait for a
	// connection inside the transport, holding a slot.
	DefaultFetchSlots  = 32
	DefaultHostFetches = federation.DefaultMaxConnsPerHost
	// DefaultDomainShare and DefaultDomainFetches are the same shares for
	// all the hosts of one registrable domain together (host.Name's
	// Registrable: the public suffix list's unit), so that throwaway names
	// under one wildcard domain, which cost their owner nothing, get one
	// share between them. The per-host caps above hold inside it.
	DefaultDomainShare   = 2 * DefaultHostShare
	DefaultDomainFetches = 2 * DefaultHostFetches
)

const (
	// busyWait is how long a request whose key is cached waits for a slot
	// before it is answered 503: long enough to ride out a short burst.
	busyWait = time.Second
	// KeyFetchTimeout bounds one key fetch (and one fetch of an activity or
	// object from its origin), waiting for a connection included: Mastodon's
	// Request (app/lib/request.rb) allows 5 s to connect and 10 s per read.
	// The client's own connect timeout is 5 s.
	KeyFetchTimeout = 10 * time.Second
	// slowFetch is how long a key fetch may take before its host counts as
	// slow, like one that failed.
	slowFetch = 5 * time.Second
	// coolOff is how long a host whose key fetch failed or was slow gets no
	// more key fetches: requests that would need one are answered 503 at
	// once. Mastodon holds a failing source for 5 minutes (Stoplight in
	// signature_verification.rb); a minute lets an honest server that had a
	// bad moment back sooner, and Herald fetches each key only once a day.
	coolOff = time.Minute
	// fetchRetry is the Retry-After of a request refused because its host's
	// key fetches are all in use: they end within KeyFetchTimeout.
	fetchRetry = 10 * time.Second
	// busyRetry is the Retry-After of a request refused for lack of slots.
	busyRetry = 30 * time.Second
	// maxHosts bounds the per-host table; hosts with nothing in flight and
	// no cool-off are dropped first.
	maxHosts = 10000
)

// Reasons a request is refused before it is processed: the label values
// of federation_inbox_throttled_total (busy is counted on its own).
const (
	refusedBusy        = "busy"
	refusedHostShare   = "host_share"
	refusedKeyFetches  = "key_fetches"
	refusedHostFailing = "key_host_failing"
	// refusedHostRate is the one answered 429: the host is past its rate
	// (ratelimit.go).
	refusedHostRate = "host_rate"
)

// Limits shares the inbox's capacity between remote hosts. Use NewLimits;
// the zero value admits nothing.
type Limits struct {
	max, hostMax, fetchMax, hostFetchMax int
	domainMax, domainFetchMax            int

	mu       sync.Mutex
	total    int // requests in flight
	fetching int // of them, holding a key fetch permit
	hosts    map[string]*hostLoad
	domains  map[string]*hostLoad     // by registrable domain (no cool-off)
	changed  chan struct{}            // closed (and replaced) whenever capacity frees
	flights  map[string]chan struct{} // key ids being fetched; closed when the fetch ends
	// refetches are the key ids being fetched again after a signature
	// failed with the cached key (a rotation, verify.go); closed at the end.
	refetches map[string]chan struct{}
}

type hostLoad struct {
	inFlight, fetching int
	coolUntil          time.Time
}

// NewLimits makes the limits the server uses: max requests in flight, at
// most hostShare of them from one key host, at most fetchSlots waiting on
// key fetches and hostFetches of those for one host; the hosts of one
// registrable domain share twice a host's share of each.
func NewLimits(max, hostShare, fetchSlots, hostFetches int) *Limits {
	return &Limits{max: max, hostMax: hostShare, fetchMax: fetchSlots, hostFetchMax: hostFetches,
		domainMax: 2 * hostShare, domainFetchMax: 2 * hostFetches, domains: map[string]*hostLoad{},
		hosts: map[string]*hostLoad{}, changed: make(chan struct{}), flights: map[string]chan struct{}{},
		refetches: map[string]chan struct{}{}}
}

// DefaultLimits are the production limits.
func DefaultLimits() *Limits {
	return NewLimits(DefaultConcurrency, DefaultHostShare, DefaultFetchSlots, DefaultHostFetches)
}

// ticket is an admitted request's hold on the capacity; release gives it
// back. A nil ticket (no Limits) holds nothing.
type ticket struct {
	l        *Limits
	host     string
	domain   string // host's registrable domain
	fetching bool
	key      string        // the key id this ticket fetches, if it started the flight
	flight   chan struct{} // closed when that fetch ends
}

// refusal says why a request was not admitted and when to come back.
type refusal struct {
	reason     string
	retryAfter time.Duration
}

// admit takes a slot for a request naming key, a key id on host. A
// request that needs a key fetch (fetch) is admitted only if a fetch
// permit is free at once and the host is not cooling off: it never waits,
// so it is never ahead of a cached-key request in any queue. A request
// that needs no fetch waits up to busyWait for the inbox and its host's
// share.
//
// When that key is already being fetched, a request that needs it gets
// no slot but the fetch's end to wait for (holding nothing), after which
// it looks in the cache again: a new actor's first burst of deliveries
// costs one fetch and one permit.
func (l *Limits) admit(ctx context.Context, host, key string, fetch bool, now time.Time) (*ticket, *refusal, <-chan struct{}) {
	if l == nil {
		return nil, nil, nil
	}
	var timer *time.Timer
	for {
		l.mu.Lock()
		if fl := l.flights[key]; fetch && fl != nil {
			l.mu.Unlock()
			return nil, nil, fl
		}
		h := l.host(host, now)
		domain := domainOf(host)
		d := l.domain(domain)
		ok, why := l.fits(h, d, fetch, now)
		if ok {
			l.total++
			h.inFlight++
			d.inFlight++
			t := &ticket{l: l, host: host, domain: domain, fetching: fetch}
			if fetch {
				l.fetching++
				h.fetching++
				d.fetching++
				if key != "" {
					t.key, t.flight = key, make(chan struct{})
					l.flights[key] = t.flight
				}
			}
			l.mu.Unlock()
			return t, nil, nil
		}
		changed := l.changed
		l.forget(host, h, now)
		l.forgetDomain(domain, d)
		l.mu.Unlock()
		if fetch || why.reason != refusedBusy && why.reason != refusedHostShare {
			return nil, why, nil // a request that needs a fetch never waits
		}
		if timer == nil {
			timer = time.NewTimer(busyWait)
			defer timer.Stop()
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, why, nil
		case <-ctx.Done():
			return nil, why, nil
		}
	}
}

// fits reports whether a request may start now: within the inbox's
// capacity, its domain's share and its host's. Called with l.mu held.
func (l *Limits) fits(h, d *hostLoad, fetch bool, now time.Time) (bool, *refusal) {
	if fetch {
		if now.Before(h.coolUntil) {
			return false, &refusal{refusedHostFailing, h.coolUntil.Sub(now)}
		}
		if !l.fetchFits(h, d) {
			return false, &refusal{refusedKeyFetches, fetchRetry}
		}
	}
	if l.total >= l.max {
		return false, &refusal{refusedBusy, busyRetry}
	}
	if h.inFlight >= l.hostMax || d.inFlight >= l.domainMax {
		return false, &refusal{refusedHostShare, busyRetry}
	}
	return true, nil
}

// fetchFits reports whether one more key fetch fits the inbox's permits,
// the domain's and the host's. Called with l.mu held.
func (l *Limits) fetchFits(h, d *hostLoad) bool {
	return l.fetching < l.fetchMax && h.fetching < l.hostFetchMax && d.fetching < l.domainFetchMax
}

// domainOf is the registrable domain of a key host (host[:port]), the unit
// the domain shares count; a host that does not parse is its own.
func domainOf(authority string) string {
	a, err := host.ParseAuthority(authority)
	if err != nil {
		return authority
	}
	return a.Name.Registrable()
}

// domain returns the load entry of a registrable domain, creating it.
// Called with l.mu held.
func (l *Limits) domain(d string) *hostLoad {
	e := l.domains[d]
	if e == nil {
		e = &hostLoad{}
		l.domains[d] = e
	}
	return e
}

// forgetDomain drops an idle domain's entry. Called with l.mu held.
func (l *Limits) forgetDomain(d string, e *hostLoad) {
	if e.inFlight == 0 && e.fetching == 0 {
		delete(l.domains, d)
	}
}

// host returns the load entry of host, creating it. Called with l.mu held.
func (l *Limits) host(host string, now time.Time) *hostLoad {
	h := l.hosts[host]
	if h == nil {
		if len(l.hosts) >= maxHosts {
			l.prune(now)
		}
		h = &hostLoad{}
		l.hosts[host] = h
	}
	return h
}

// forget drops an idle host's entry. Called with l.mu held.
func (l *Limits) forget(host string, h *hostLoad, now time.Time) {
	if h.inFlight == 0 && h.fetching == 0 && !now.Before(h.coolUntil) {
		delete(l.hosts, host)
	}
}

// prune drops every idle entry, and if that is not enough the cooling ones
// too: forgetting a cool-off is better than growing without bound. Called
// with l.mu held.
func (l *Limits) prune(now time.Time) {
	for host, h := range l.hosts {
		l.forget(host, h, now)
	}
	if len(l.hosts) < maxHosts {
		return
	}
	for host, h := range l.hosts {
		if h.inFlight == 0 && h.fetching == 0 {
			delete(l.hosts, host)
		}
	}
}

// fetch upgrades the ticket of a request that needs a key fetch it did not
// expect (its cached key failed, or was stale), without waiting. It
// reports false if the host is cooling off or its fetch permits are in use.
func (t *ticket) fetch(now time.Time) bool {
	if t == nil {
		return true
	}
	if t.fetching {
		return true
	}
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.host(t.host, now)
	d := l.domain(t.domain)
	if now.Before(h.coolUntil) || !l.fetchFits(h, d) {
		return false
	}
	l.fetching++
	h.fetching++
	d.fetching++
	t.fetching = true
	return true
}

// fetched records how a key fetch for the ticket's host went: a failure,
// or a fetch slower than slowFetch, makes the host cool off.
func (t *ticket) fetched(failed bool, took time.Duration, now time.Time) {
	if t == nil {
		return
	}
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	t.endFlight()
	if failed || took >= slowFetch {
		l.host(t.host, now).coolUntil = now.Add(coolOff)
	}
}

// endFlight tells the requests waiting for the ticket's key fetch that it
// ended. Called with l.mu held.
func (t *ticket) endFlight() {
	if t.flight != nil {
		close(t.flight)
		delete(t.l.flights, t.key)
		t.flight = nil
	}
}

// fetchRefusal says why a fetch for host was refused: the host is cooling
// off (for how much longer), or its permits are in use.
func (l *Limits) fetchRefusal(host string, now time.Time) *refusal {
	if l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		if h := l.hosts[host]; h != nil && now.Before(h.coolUntil) {
			return &refusal{refusedHostFailing, h.coolUntil.Sub(now)}
		}
	}
	return &refusal{refusedKeyFetches, fetchRetry}
}

func (t *ticket) release(now time.Time) {
	if t == nil {
		return
	}
	l := t.l
	l.mu.Lock()
	h := l.host(t.host, now)
	d := l.domain(t.domain)
	l.total--
	h.inFlight--
	d.inFlight--
	if t.fetching {
		l.fetching--
		h.fetching--
		d.fetching--
	}
	t.endFlight()
	l.forget(t.host, h, now)
	l.forgetDomain(t.domain, d)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// refetch claims the refetch of key after a failed signature: if another
// request is refetching it, wait is closed when that one ends; otherwise
// the caller refetches and calls end when done. nil Limits: the caller
// refetches.
func (l *Limits) refetch(key string) (wait <-chan struct{}, end func()) {
	if l == nil {
		return nil, func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch := l.refetches[key]; ch != nil {
		return ch, nil
	}
	ch := make(chan struct{})
	l.refetches[key] = ch
	return nil, func() {
		l.mu.Lock()
		delete(l.refetches, key)
		l.mu.Unlock()
		close(ch)
	}
}
