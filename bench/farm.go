package bench

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"herald/federation/signature"
)

// FarmDomain is the DNS suffix of the farm's virtual hosts. .test is
// reserved (RFC 2606): no real host can carry it.
const FarmDomain = "farm.test"

// farmAcceptSignature is what Fedify-style farm hosts answer with: a
// request for RFC 9421 signatures made with an Ed25519 key.
const farmAcceptSignature = `sig1=("@method" "@target-uri" "content-digest");alg="ed25519"`

// Behaviour is how a farm host treats the requests it gets.
type Behaviour uint8

// Host behaviours.
const (
	Healthy    Behaviour = iota // verify, count, answer 202
	BlackHole                   // read the request, never answer
	Refuse                      // connection refused at once
	Slow                        // like Healthy, after FarmOptions.SlowDelay
	Fail5xx                     // verify, answer 503
	CavageOnly                  // like Healthy, but 401 to RFC 9421 (Mastodon before 4.5)
)

// String names the behaviour, as in reports.
func (b Behaviour) String() string {
	return [...]string{"healthy", "black-hole", "refuse", "slow", "5xx", "cavage-only"}[b]
}

// answers reports whether hosts of behaviour b take deliveries (2xx).
func (b Behaviour) answers() bool { return b == Healthy || b == Slow || b == CavageOnly }

// FarmOptions configures NewFarm. The fractions pick hosts at random (with
// Seed), without overlap; the remaining hosts are Healthy.
type FarmOptions struct {
	Hosts     int
	PublicKey crypto.PublicKey // the sender's key: every signature is verified with it
	// Ed25519Key is the sender's Ed25519 key (FEP-521a), for signatures
	// whose keyid ends in /ed25519-key; nil refuses them as bad.
	Ed25519Key crypto.PublicKey
	// CavageOnly is the fraction of hosts that refuse RFC 9421 (401), as
	// Mastodon before 4.5 does; the others (Healthy) verify draft-cavage,
	// RFC 9421 and Ed25519, as Fedify does, and say so in an
	// Accept-Signature header.
	CavageOnly float64
	BlackHole  float64       // fraction of hosts that never answer
	Refuse     float64       // fraction of hosts that refuse connections
	Slow       float64       // fraction of hosts that answer after SlowDelay
	Fail5xx    float64       // fraction of hosts that answer 503
	SlowDelay  time.Duration // default 500 ms
	Seed       uint64
	// RefuseElsewhere says that refusals happen in a dialer in another
	// process (RemoteFarm), which waits for them itself: Done does not.
	RefuseElsewhere bool
}

// Farm is a loopback inbox farm: many virtual hosts behind one listener.
// Create it with NewFarm, give Dial to the delivery client, register each
// activity with Expect before enqueuing it, and wait on Done.
type Farm struct {
	opts   FarmOptions
	ln     net.Listener
	srv    *http.Server
	kinds  []Behaviour
	epoch  time.Time
	closed chan struct{}

	newConns  atomic.Int64 // TCP connections accepted
	requests  atomic.Int64 // requests received (any host, any answer)
	badSigs   atomic.Int64 // requests whose signature did not verify
	refusals  atomic.Int64 // dials refused
	unmatched atomic.Int64 // requests for an activity nobody expected

	// Verified signatures by kind, and the RFC 9421 knocks CavageOnly
	// hosts refused (of which signed with Ed25519: must stay 0).
	cavage, rfc9421RSA, ed25519, refused9421, edToCavageOnly atomic.Int64

	mu         sync.Mutex
	acts       map[string]*activityLog
	firstTouch []int64 // per host: ns since epoch of its first attempt (any kind), 0 if none
	remaining  int     // pairs and touches still awaited before done closes
	done       chan struct{}
}

// activityLog is what the farm saw of one activity.
type activityLog struct {
	first []int64  // per host: ns since epoch of the first verified delivery, 0 if none
	count []uint32 // per host: verified deliveries
}

// NewFarm starts a farm on 127.0.0.1 (an ephemeral port).
func NewFarm(opts FarmOptions) (*Farm, error) {
	if opts.Hosts <= 0 {
		return nil, errors.New("farm: no hosts")
	}
	if opts.SlowDelay <= 0 {
		opts.SlowDelay = 500 * time.Millisecond
	}
	if s := opts.BlackHole + opts.Refuse + opts.Slow + opts.Fail5xx + opts.CavageOnly; s > 1 {
		return nil, fmt.Errorf("farm: host fractions add up to %.2f > 1", s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &Farm{
		opts:       opts,
		ln:         ln,
		kinds:      make([]Behaviour, opts.Hosts),
		epoch:      time.Now(),
		closed:     make(chan struct{}),
		acts:       map[string]*activityLog{},
		firstTouch: make([]int64, opts.Hosts),
		done:       make(chan struct{}),
	}
	// Shuffle host indices and hand out behaviours in order.
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	perm := rng.Perm(opts.Hosts)
	next := 0
	for _, k := range []struct {
		b Behaviour
		f float64
	}{{BlackHole, opts.BlackHole}, {Refuse, opts.Refuse}, {Slow, opts.Slow}, {Fail5xx, opts.Fail5xx}, {CavageOnly, opts.CavageOnly}} {
		n := int(k.f*float64(opts.Hosts) + 0.5)
		for i := 0; i < n && next < len(perm); i++ {
			f.kinds[perm[next]] = k.b
			next++
		}
	}
	f.srv = &http.Server{
		Handler:           http.HandlerFunc(f.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				f.newConns.Add(1)
			}
		},
		ErrorLog: nil,
	}
	go f.srv.Serve(ln)
	return f, nil
}

// Close stops the farm; black-holed requests are released.
func (f *Farm) Close() error {
	select {
	case <-f.closed:
		return nil
	default:
	}
	close(f.closed)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		return f.srv.Close()
	}
	return nil
}

// Addr is the farm's real listening address (127.0.0.1:port).
func (f *Farm) Addr() string { return f.ln.Addr().String() }

// Hosts is the number of virtual hosts.
func (f *Farm) Hosts() int { return len(f.kinds) }

// Behaviour returns how host i behaves.
func (f *Farm) Behaviour(i int) Behaviour { return f.kinds[i] }

// HostName is the name of host i (0-based): h0001.farm.test for i = 0.
func HostName(i int) string { return fmt.Sprintf("h%04d.%s", i+1, FarmDomain) }

// SharedInbox is the shared inbox URL of host i.
func SharedInbox(i int) string { return "http://" + HostName(i) + "/inbox" }

// FollowerID is the id of follower n on host i.
func FollowerID(i, n int) string { return fmt.Sprintf("http://%s/users/u%05d", HostName(i), n) }

// hostIndex parses a farm host name (with or without a port) back to its
// index; ok is false for anything that is not one of ours.
func (f *Farm) hostIndex(hostport string) (int, bool) { return parseHostIndex(hostport, len(f.kinds)) }

// parseHostIndex parses a farm host name of a farm of n hosts.
func parseHostIndex(hostport string, n int) (int, bool) {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.ToLower(h)
	name, ok := strings.CutSuffix(h, "."+FarmDomain)
	if !ok || len(name) < 2 || name[0] != 'h' {
		return 0, false
	}
	i, err := strconv.Atoi(name[1:])
	if err != nil || i < 1 || i > n {
		return 0, false
	}
	return i - 1, true
}

// Dial is the delivery client's DialContext: it maps every farm host name
// to the farm's listener, refuses at once for hosts that refuse, and fails
// for any other address. It never reaches beyond 127.0.0.1.
func (f *Farm) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	i, ok := f.hostIndex(addr)
	if !ok {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("bench: %s is not a farm host: not dialled", addr)}
	}
	if f.kinds[i] == Refuse {
		f.refusals.Add(1)
		f.touch(i)
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	d := net.Dialer{LocalAddr: HostSource(i)}
	return d.DialContext(ctx, "tcp", f.Addr())
}

// HostSource is the loopback address host i's connections come from
// (127.16.0.1 for i = 0, then up, about 15 million of them): every host
// gets its own 4-tuples, so tens of thousands of hosts do not exhaust the
// one source address's ephemeral ports (28,000 here) or collide with its
// TIME_WAIT sockets, as real senders and receivers on separate addresses
// would not. It is always inside 127.0.0.0/8.
func HostSource(i int) *net.TCPAddr {
	n := i + 1
	return &net.TCPAddr{IP: net.IPv4(127, byte(16+n>>16), byte(n>>8), byte(n))}
}

// Expect registers an activity id before it is enqueued. The farm's Done
// channel closes once every Healthy and Slow host has had a verified
// delivery of every expected activity and every other host has been
// attempted at least once.
func (f *Farm) Expect(activityID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acts[activityID] = &activityLog{first: make([]int64, len(f.kinds)), count: make([]uint32, len(f.kinds))}
	for i, k := range f.kinds {
		if k.answers() {
			f.remaining++
		} else if k == Refuse && f.opts.RefuseElsewhere {
			continue
		} else if len(f.acts) == 1 && f.firstTouch[i] == 0 {
			f.remaining++
		}
	}
}

// Done closes when everything Expect asked for has arrived.
func (f *Farm) Done() <-chan struct{} { return f.done }

func (f *Farm) since() int64 { return int64(time.Since(f.epoch)) + 1 } // never 0

// touch records an attempt on a host that will not be counted as a
// delivery (black hole, refusal, 5xx).
func (f *Farm) touch(i int) {
	t := f.since()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.firstTouch[i] == 0 {
		f.firstTouch[i] = t
		if k := f.kinds[i]; !k.answers() && len(f.acts) > 0 {
			f.settle()
		}
	}
}

// settle counts one awaited event; f.mu is held.
func (f *Farm) settle() {
	f.remaining--
	if f.remaining == 0 {
		close(f.done)
	}
}

func (f *Farm) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	i, ok := f.hostIndex(r.Host)
	if !ok {
		http.Error(w, "unknown host", http.StatusMisdirectedRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	switch f.kinds[i] {
	case BlackHole:
		f.touch(i)
		select {
		case <-r.Context().Done():
		case <-f.closed:
		}
		return
	case Slow:
		select {
		case <-time.After(f.opts.SlowDelay):
		case <-r.Context().Done():
			return
		}
	}
	s, err := signature.Parse(r, body, signature.Options{Scheme: "http"})
	ed := err == nil && strings.HasSuffix(s.KeyID, "/ed25519-key")
	if err == nil {
		key := f.opts.PublicKey
		if ed {
			key = f.opts.Ed25519Key
		}
		err = s.Verify(key)
	}
	if err != nil {
		f.badSigs.Add(1)
		http.Error(w, "signature: "+err.Error(), http.StatusUnauthorized)
		return
	}
	switch {
	case f.kinds[i] == CavageOnly && s.Scheme != signature.Cavage:
		f.refused9421.Add(1)
		if ed {
			f.edToCavageOnly.Add(1)
		}
		http.Error(w, "signature: only draft-cavage here", http.StatusUnauthorized)
		return
	case ed:
		f.ed25519.Add(1)
	case s.Scheme == signature.Cavage:
		f.cavage.Add(1)
	default:
		f.rfc9421RSA.Add(1)
	}
	if f.kinds[i] != CavageOnly {
		// A Fedify-style host shows that it verifies RFC 9421 with Ed25519
		// keys the one way a farm host can: it asks for them (RFC 9421
		// section 5). A 2xx alone would not move Herald off draft-cavage.
		w.Header().Set("Accept-Signature", farmAcceptSignature)
	}
	if f.kinds[i] == Fail5xx {
		f.touch(i)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var doc struct {
		ID string `json:"id"`
	}
	json.Unmarshal(body, &doc)
	t := f.since()
	f.mu.Lock()
	a := f.acts[doc.ID]
	if a == nil {
		f.mu.Unlock()
		f.unmatched.Add(1)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	a.count[i]++
	if a.first[i] == 0 {
		a.first[i] = t
		if f.firstTouch[i] == 0 {
			f.firstTouch[i] = t
		}
		f.settle()
	}
	f.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// FarmStats are the farm's counters, and, from a farm process, that
// process's own CPU time and peak RSS.
type FarmStats struct {
	NewConns, Requests, BadSignatures, Refusals, Unmatched int64
	// Verified signatures: draft-cavage (RSA), RFC 9421 with RSA, RFC
	// 9421 with Ed25519; RFC 9421 knocks refused by CavageOnly hosts, and
	// of those the Ed25519 ones (never sent, if the sender is right).
	Cavage, RFC9421RSA, Ed25519, Refused9421, Ed25519ToCavageOnly int64
	CPU                                                           time.Duration
	PeakRSS                                                       uint64
}

// Stats returns the farm's counters so far.
func (f *Farm) Stats() FarmStats {
	return FarmStats{NewConns: f.newConns.Load(), Requests: f.requests.Load(), BadSignatures: f.badSigs.Load(), Refusals: f.refusals.Load(), Unmatched: f.unmatched.Load(),
		Cavage: f.cavage.Load(), RFC9421RSA: f.rfc9421RSA.Load(), Ed25519: f.ed25519.Load(), Refused9421: f.refused9421.Load(), Ed25519ToCavageOnly: f.edToCavageOnly.Load()}
}

// Arrivals returns, for an expected activity, the time of each host's first
// verified delivery (zero if none) and how many verified deliveries each
// host got.
func (f *Farm) Arrivals(activityID string) (first []time.Time, count []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.acts[activityID]
	if a == nil {
		return nil, nil
	}
	first = make([]time.Time, len(a.first))
	count = make([]int, len(a.count))
	for i := range a.first {
		if a.first[i] != 0 {
			first[i] = f.epoch.Add(time.Duration(a.first[i] - 1))
		}
		count[i] = int(a.count[i])
	}
	return first, count
}

// FirstAttempts returns when each host was first attempted, whatever came
// of it (a verified delivery, a black-holed request, a refused dial, a
// 503); zero for hosts never attempted.
func (f *Farm) FirstAttempts() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]time.Time, len(f.firstTouch))
	for i, t := range f.firstTouch {
		if t != 0 {
			out[i] = f.epoch.Add(time.Duration(t - 1))
		}
	}
	return out
}
