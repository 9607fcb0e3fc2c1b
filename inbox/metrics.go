package inbox

import (
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"herald/federation/signature"
)

// Drop reasons: the label values of federation_inbox_dropped_total. Every
// dropped request is answered 202 like a success, so the sender learns
// nothing; the counter is how the operator learns.
const (
	DropDuplicate     = "duplicate"
	DropBlocked       = "blocked"
	DropActorMismatch = "actor_mismatch"
	DropUnknownDelete = "unknown_delete"
	DropInvalid       = "invalid"
	DropUnaddressed   = "unaddressed"
	// DropForeignOrigin: an id or actor on another host than the signer
	// (or on Herald's own) that its origin did not serve as sent.
	DropForeignOrigin = "foreign_origin"
	// DropMisattributed: an embedded object whose id or author is not on
	// the actor's host, in a Create, Update or Delete (or served so by its
	// origin).
	DropMisattributed = "misattributed"
	// The Move refusals (move.go): not the actor moving itself, or to a
	// target on Herald; no local actor follows the actor; the target,
	// fetched from its server, does not list the actor in alsoKnownAs (or
	// could not be fetched).
	DropMoveInvalid     = "move_invalid"
	DropMoveNotFollowed = "move_not_followed"
	DropMoveUnverified  = "move_unverified"
)

// dropReasons are the label values of federation_inbox_dropped_total,
// created at zero so that an alert sees the first one.
var dropReasons = []string{DropDuplicate, DropBlocked, DropActorMismatch, DropUnknownDelete, DropInvalid, DropUnaddressed, DropForeignOrigin, DropMisattributed,
	DropMoveInvalid, DropMoveNotFollowed, DropMoveUnverified}

// ReasonKeyUnavailable is the refusal reason for a signing key that could
// not be fetched; the others are signature.Reasons.
const ReasonKeyUnavailable = "key_unavailable"

// VerifyFailureReasons are the label values of
// federation_inbox_verify_failures_total.
func VerifyFailureReasons() []string {
	var out []string
	for _, r := range signature.Reasons() {
		out = append(out, string(r))
	}
	return append(out, ReasonKeyUnavailable, ReasonLocalKey)
}

// ReasonLocalKey is the refusal reason for a keyId on Herald's own host.
const ReasonLocalKey = "local_key"

// Results of signed GETs (VerifyGET): the label values of
// federation_signed_get_total.
const (
	getVerified = "verified"
	getUnsigned = "unsigned"
	getInvalid  = "invalid"
	getRefused  = "refused"
	getBusy     = "busy"
)

// knownTypes bounds the type label of federation_inbox_received_total;
// anything else is counted as "other" so a sender cannot grow the series.
var knownTypes = map[string]bool{
	"Create": true, "Update": true, "Delete": true, "Follow": true, "Accept": true, "Reject": true,
	"Undo": true, "Announce": true, "Like": true, "EmojiReact": true, "Block": true, "Add": true,
	"Remove": true, "Move": true, "Flag": true, "QuoteRequest": true,
}

// Metrics are the inbox's Prometheus metrics and the recent drops the
// status page shows.
type Metrics struct {
	received       *prometheus.CounterVec
	dropped        *prometheus.CounterVec
	verifyFailures *prometheus.CounterVec
	busy           prometheus.Counter
	refused        *prometheus.CounterVec
	signedGETs     *prometheus.CounterVec

	mu         sync.Mutex
	recent     []Drop    // newest last, at most maxRecent; verified signers only
	unverified int64     // drops of requests whose signer was not verified
	refusals   []Refusal // newest last, at most maxRecent
}

// Drop is one dropped request, for the status page.
type Drop struct {
	At     time.Time
	Reason string
	Host   string
}

// Refusal is one request refused for its signature, for the console.
type Refusal struct {
	At     time.Time
	Reason string
	KeyID  string // as the request named it; "" when unsigned
	Remote string // the peer's address
	Status int
}

const maxRecent = 50

// NewMetrics creates the inbox metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "federation_inbox_received_total",
			Help: "Activities accepted by the inbox (signature verified, not a duplicate), by activity type.",
		}, []string{"type"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "federation_inbox_dropped_total",
			Help: "Inbox requests answered 202 but not processed, by reason.",
		}, []string{"reason"}),
		verifyFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "federation_inbox_verify_failures_total",
			Help: "Inbox requests refused because their HTTP signature did not verify, by reason.",
		}, []string{"reason"}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "federation_inbox_busy_total",
			Help: "Inbox requests answered 503 because the inbox was processing as many as it takes at once.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "federation_inbox_throttled_total",
			Help: "Inbox requests answered 503 to share the inbox fairly between hosts, or 429 to a host past its rate (host_rate), by reason.",
		}, []string{"reason"}),
		signedGETs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "federation_signed_get_total",
			Help: "GETs whose HTTP signature was checked (authorized fetch), by result: verified, unsigned, invalid, refused (the signer's host), busy (503).",
		}, []string{"result"}),
	}
	// Every series exists from the start at zero, so that increase() and
	// rate() see the first event instead of a series appearing from
	// nothing.
	types := make([]string, 0, len(knownTypes)+1)
	for t := range knownTypes {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range append(types, "other") {
		m.received.WithLabelValues(t)
	}
	for _, r := range dropReasons {
		m.dropped.WithLabelValues(r)
	}
	for _, r := range VerifyFailureReasons() {
		m.verifyFailures.WithLabelValues(r)
	}
	for _, r := range []string{refusedHostShare, refusedKeyFetches, refusedHostFailing, refusedHostRate} {
		m.refused.WithLabelValues(r)
	}
	for _, r := range []string{getVerified, getUnsigned, getInvalid, getRefused, getBusy} {
		m.signedGETs.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.received, m.dropped, m.verifyFailures, m.busy, m.refused, m.signedGETs)
	}
	return m
}

func (m *Metrics) countReceived(typ string) {
	if !knownTypes[typ] {
		typ = "other"
	}
	m.received.WithLabelValues(typ).Inc()
}

func (m *Metrics) countDrop(reason, host string, now time.Time) {
	m.dropped.WithLabelValues(reason).Inc()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recent = append(m.recent, Drop{At: now, Reason: reason, Host: host})
	if len(m.recent) > maxRecent {
		m.recent = m.recent[len(m.recent)-maxRecent:]
	}
}

// countUnverifiedDrop counts a drop decided before the signer was
// verified (a blocked domain, an unknown actor's Delete): the host the
// request claims is not listed, since anyone can claim any host.
func (m *Metrics) countUnverifiedDrop(reason string) {
	m.dropped.WithLabelValues(reason).Inc()
	m.mu.Lock()
	m.unverified++
	m.mu.Unlock()
}

// countRefused counts a 503: busy for lack of slots, or a throttle reason.
func (m *Metrics) countRefused(reason string) {
	if reason == refusedBusy {
		m.busy.Inc()
		return
	}
	m.refused.WithLabelValues(reason).Inc()
}

// UnverifiedDrops is how many requests were dropped before their signer
// was verified, since start.
func (m *Metrics) UnverifiedDrops() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unverified
}

func (m *Metrics) countGET(result string) { m.signedGETs.WithLabelValues(result).Inc() }

func (m *Metrics) countVerifyFailure(reason string) {
	m.verifyFailures.WithLabelValues(reason).Inc()
}

func (m *Metrics) recordRefusal(r Refusal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refusals = append(m.refusals, r)
	if len(m.refusals) > maxRecent {
		m.refusals = m.refusals[len(m.refusals)-maxRecent:]
	}
}

// RecentRefusals returns the latest requests refused for their signature,
// newest first.
func (m *Metrics) RecentRefusals() []Refusal {
	m.mu.Lock()
	defer m.mu.Unlock()
	return newestFirst(m.refusals)
}

// RecentDrops returns the latest drops of requests from verified signers,
// newest first.
func (m *Metrics) RecentDrops() []Drop {
	m.mu.Lock()
	defer m.mu.Unlock()
	return newestFirst(m.recent)
}

func newestFirst[T any](list []T) []T {
	out := make([]T, len(list))
	for i, d := range list {
		out[len(out)-1-i] = d
	}
	return out
}
