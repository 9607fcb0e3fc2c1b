package policy

import (
	"herald/host"
)

// Severities of a domain entry, as Mastodon's DomainBlock has them
// (app/models/domain_block.rb: noop, silence, suspend). The console and
// the CLI call silence "limit", as Mastodon's admin UI does.
const (
	SeveritySuspend = "suspend"
	SeveritySilence = "silence"
	SeverityNoop    = "noop"
)

// ParseSeverity reads a severity given by an operator or a CSV file:
// suspend, silence (or limit), noop; "" is suspend.
func ParseSeverity(s string) (string, bool) {
	switch s {
	case "", SeveritySuspend:
		return SeveritySuspend, true
	case SeveritySilence, "limit":
		return SeveritySilence, true
	case SeverityNoop:
		return SeverityNoop, true
	}
	return "", false
}

// DomainRule is a blocklist entry that does not suspend (silence or noop),
// or the flags of one that does.
type DomainRule struct {
	Domain        string
	Severity      string
	RejectMedia   bool
	RejectReports bool
}

// AccountRule is the operator's suspension or limit of one remote account.
type AccountRule struct {
	Account  string // the actor id
	Severity string // SeveritySuspend or SeveritySilence
}

// Moderation is what the policy says about a remote account beyond
// whether its host is refused. The zero Moderation is no moderation.
type Moderation struct {
	// Limited: the account or its domain is silenced. What it sends is
	// accepted but kept out of public views (the relay feed), its Follows
	// of local actors need approval, and it reaches the inbox of a local
	// actor only if that actor follows it.
	Limited bool
	// RejectMedia: attachments from its domain are neither stored nor
	// fetched.
	RejectMedia bool
	// RejectReports: its domain's Flags are ignored.
	RejectReports bool
	// Entry is the domain or account entry that limited it.
	Entry string
}

// Suspended reports whether the operator suspended the remote account (by
// its id) itself: it is refused as a blocked host is.
func (p *Policy) Suspended(account string) bool {
	if p == nil {
		return true
	}
	return p.accounts[account] == SeveritySuspend
}

// Moderate is the Moderation of a remote account (by its id): the flags of
// every entry for its host or a domain above it, and its own limit.
func (p *Policy) Moderate(account string) Moderation {
	var m Moderation
	if p == nil {
		return Moderation{Limited: true, RejectMedia: true, RejectReports: true}
	}
	if p.accounts[account] == SeveritySilence {
		m.Limited, m.Entry = true, account
	}
	n, err := host.NameOf(account)
	if err != nil {
		return m
	}
	for _, d := range n.Chain() {
		r, ok := p.domains[d]
		if !ok {
			continue
		}
		if r.Severity == SeveritySilence && !m.Limited {
			m.Limited, m.Entry = true, r.Domain
		}
		m.RejectMedia = m.RejectMedia || r.RejectMedia
		m.RejectReports = m.RejectReports || r.RejectReports
	}
	return m
}

// ActorSuspended reports whether the operator suspended the local actor
// (a row id): nothing of it is delivered or served.
func (p *Policy) ActorSuspended(actorID int64) bool {
	if p == nil {
		return false
	}
	return p.suspended[actorID]
}

// ActorNameSuspended is ActorSuspended by the local actor's name.
func (p *Policy) ActorNameSuspended(name string) bool {
	if p == nil {
		return false
	}
	return p.suspendedN[name]
}
