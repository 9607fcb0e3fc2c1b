package policy

import (
	"time"

	"herald/host"
)

// Rule names the part of the policy that refused a host; it is the label
// of the metrics that count refusals and starts the reason a skipped
// delivery records.
type Rule string

// The rules, in the order they are applied.
const (
	// RuleInvalid: the host is no host (host.Parse refused it).
	RuleInvalid Rule = "invalid_host"
	// RuleBlocked: the operator blocks the host or a domain above it.
	RuleBlocked Rule = "blocked"
	// RuleNotAllowed: allowlist mode, and no entry covers the host.
	RuleNotAllowed Rule = "not_allowed"
	// RuleActorBlocked: the local actor blocks the host (that host alone:
	// an actor's block is not the operator's, FEDERATION.md).
	RuleActorBlocked Rule = "actor_blocked"
	// RuleUnavailable: deliveries to the host failed on
	// UnavailableAfterDays distinct days, and it has not spoken since.
	RuleUnavailable Rule = "unavailable"
	// RulePaused: the operator paused deliveries to the host.
	RulePaused Rule = "paused"
	// RuleActorSuspended: the operator suspended the local actor whose
	// activity it is; its deliveries wait (unsuspended within MaxHold,
	// they go out).
	RuleActorSuspended Rule = "actor_suspended"
)

// Verdict is what the policy says about one host. The zero Verdict lets it
// through.
type Verdict struct {
	Rule  Rule
	Entry string    // the list entry that matched (a blocked domain), if any
	Until time.Time // the end of a pause; zero for none or until resumed
}

// Refused reports whether the host is refused.
func (v Verdict) Refused() bool { return v.Rule != "" }

// Held reports whether a delivery the verdict refuses waits rather than
// fails: the policy that refuses it is one the operator is expected to
// change (a pause ends; in allowlist mode a host is allowed once the
// operator has looked at it). A block, an actor's block, an unavailable
// host and an invalid one fail the delivery at once.
func (v Verdict) Held() bool {
	return v.Rule == RuleNotAllowed || v.Rule == RulePaused || v.Rule == RuleActorSuspended
}

// Reason is the verdict in words, for a delivery's report and the logs:
// the rule and what matched.
func (v Verdict) Reason() string {
	switch v.Rule {
	case "":
		return ""
	case RuleInvalid:
		return "not a valid host"
	case RuleBlocked:
		return "domain blocked (" + v.Entry + ")"
	case RuleNotAllowed:
		return "not on the allowlist (allowlist mode)"
	case RuleActorBlocked:
		return "domain blocked by the actor (" + v.Entry + ")"
	case RuleUnavailable:
		return "host unavailable (deliveries failing on 7 days)"
	case RuleActorSuspended:
		return "the actor is suspended"
	case RulePaused:
		if v.Until.IsZero() {
			return "host paused"
		}
		return "host paused until " + v.Until.UTC().Format(time.RFC3339)
	}
	return string(v.Rule)
}

// Rows are what a Policy is made of, as the store reads them.
type Rows struct {
	Version      int64
	Mode         string
	Blocked      []string
	Allowed      []string
	ActorDomains []ActorDomain
	Paused       []Pause
	Unavailable  []string // authorities (host[:port]), not on probation
	// Domains are the blocklist's entries that do not suspend, and the
	// reject flags of those that do (moderation.go).
	Domains []DomainRule
	// Accounts are the operator's suspensions and limits of remote accounts.
	Accounts []AccountRule
	// SuspendedActors are the local actors the operator suspended, by row
	// id and by name.
	SuspendedActors     []int64
	SuspendedActorNames []string
}

// ActorDomain is a local actor's block of a domain.
type ActorDomain struct {
	ActorID int64
	Domain  string
}

// Pause is an operator's pause of deliveries to an authority.
type Pause struct {
	Host  string    // host[:port], as deliveries name it
	Until time.Time // zero: until resumed
}

// Policy is the federation policy as it stood at one version. It is never
// changed once made: share it freely. A nil Policy refuses every host (no
// policy could be read: Herald fails closed).
type Policy struct {
	version     int64
	mode        string
	blocked     map[host.Name]string // canonical entry -> the entry as listed
	allowed     map[host.Name]bool
	actor       map[int64]map[host.Name]string
	paused      map[string]time.Time
	unavailable map[string]bool
	domains     map[host.Name]DomainRule
	accounts    map[string]string // account id -> severity
	suspended   map[int64]bool    // local actors
	suspendedN  map[string]bool   // their names
}

// Compile makes the Policy of rows. Entries are read with host.Parse, so
// an entry an older Herald stored in another spelling (a Unicode name, an
// upper-case one) covers what it names; one that no longer parses is kept
// as it is written, lower case.
func Compile(rows Rows) *Policy {
	p := &Policy{
		version: rows.Version, mode: rows.Mode,
		blocked: map[host.Name]string{}, allowed: map[host.Name]bool{},
		actor: map[int64]map[host.Name]string{}, paused: map[string]time.Time{}, unavailable: map[string]bool{},
		domains: map[host.Name]DomainRule{}, accounts: map[string]string{}, suspended: map[int64]bool{}, suspendedN: map[string]bool{},
	}
	for _, n := range rows.SuspendedActorNames {
		p.suspendedN[n] = true
	}
	for _, d := range rows.Domains {
		p.domains[entry(d.Domain)] = d
	}
	for _, a := range rows.Accounts {
		p.accounts[a.Account] = a.Severity
	}
	for _, id := range rows.SuspendedActors {
		p.suspended[id] = true
	}
	if p.mode == "" {
		p.mode = ModeBlocklist
	}
	for _, d := range rows.Blocked {
		p.blocked[entry(d)] = d
	}
	for _, d := range rows.Allowed {
		p.allowed[entry(d)] = true
	}
	for _, b := range rows.ActorDomains {
		if p.actor[b.ActorID] == nil {
			p.actor[b.ActorID] = map[host.Name]string{}
		}
		p.actor[b.ActorID][entry(b.Domain)] = b.Domain
	}
	for _, x := range rows.Paused {
		p.paused[authority(x.Host)] = x.Until
	}
	for _, h := range rows.Unavailable {
		p.unavailable[authority(h)] = true
	}
	return p
}

func entry(d string) host.Name {
	if n, err := host.Parse(d); err == nil {
		return n
	}
	return host.Name(d)
}

func authority(s string) string {
	if a, err := host.ParseAuthority(s); err == nil {
		return a.String()
	}
	return s
}

// Version is the version of the rows the Policy was made of.
func (p *Policy) Version() int64 {
	if p == nil {
		return -1
	}
	return p.version
}

// Mode is the federation mode.
func (p *Policy) Mode() string {
	if p == nil {
		return ModeAllowlist
	}
	return p.mode
}

// Host judges a host for federation at all (any exchange: an inbound
// request, a fetch, a delivery): refused if it, or a domain above it, is
// blocked, or if the mode is allowlist and neither it nor a domain above
// it is allowed.
func (p *Policy) Host(n host.Name) Verdict {
	if n == "" {
		return Verdict{Rule: RuleInvalid}
	}
	if p == nil {
		return Verdict{Rule: RuleNotAllowed}
	}
	allowed := false
	for _, d := range n.Chain() {
		if e, ok := p.blocked[d]; ok {
			return Verdict{Rule: RuleBlocked, Entry: e}
		}
		allowed = allowed || p.allowed[d]
	}
	if p.mode == ModeAllowlist && !allowed {
		return Verdict{Rule: RuleNotAllowed}
	}
	return Verdict{}
}

// URL is Host for the host of an absolute http(s) URL (an id, a keyId, an
// inbox); anything else is RuleInvalid.
func (p *Policy) URL(raw string) Verdict {
	n, err := host.NameOf(raw)
	if err != nil {
		return Verdict{Rule: RuleInvalid}
	}
	return p.Host(n)
}

// Actor is Host, and then whether the local actor (a row id; 0 for the
// instance actor, which blocks nothing) blocks the host. An actor's block
// covers the host it names in any spelling, and that host alone (as the
// app API documents; the operator's blocks cover subdomains).
func (p *Policy) Actor(actorID int64, n host.Name) Verdict {
	if v := p.Host(n); v.Refused() {
		return v
	}
	if actorID == 0 {
		return Verdict{}
	}
	if e, ok := p.actor[actorID][n]; ok {
		return Verdict{Rule: RuleActorBlocked, Entry: e}
	}
	return Verdict{}
}

// Delivery judges one delivery of a local actor's activity (actorID 0 for
// the instance actor) to an authority at now: Actor, then whether the
// local actor is suspended, then whether the host is unavailable, then
// whether it is paused.
func (p *Policy) Delivery(actorID int64, a host.Authority, now time.Time) Verdict {
	return p.delivery(actorID, a, now, true)
}

// AnnouncementDelivery is Delivery for an activity that announces the
// local actor's own state (the Update of its document that says it is
// suspended, or the Delete of the actor): the suspension does not hold it,
// since it is how other servers learn of the suspension, as Mastodon
// delivers the Update its SuspendAccountService sends.
func (p *Policy) AnnouncementDelivery(actorID int64, a host.Authority, now time.Time) Verdict {
	return p.delivery(actorID, a, now, false)
}

// delivery is Delivery, holding a suspended actor's activities or not.
func (p *Policy) delivery(actorID int64, a host.Authority, now time.Time, holdSuspended bool) Verdict {
	if v := p.Actor(actorID, a.Name); v.Refused() {
		return v
	}
	if holdSuspended && p.suspended[actorID] {
		return Verdict{Rule: RuleActorSuspended}
	}
	key := a.String()
	if p.unavailable[key] {
		return Verdict{Rule: RuleUnavailable}
	}
	if until, ok := p.paused[key]; ok && (until.IsZero() || now.Before(until)) {
		return Verdict{Rule: RulePaused, Until: until}
	}
	return Verdict{}
}
