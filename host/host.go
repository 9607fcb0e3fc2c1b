// Package host is the one way Herald reads a host: from a URL a peer sent,
// from a keyId, from an inbox, from what an operator typed. Every spelling
// of one host comes out as one Name, so a block, a pause, a budget or a
// per-host queue cannot be walked around by writing the host another way:
//
//   - a domain is mapped as IDNA lookup does (UTS #46: case folded,
//     full-width forms and the ideographic full stop mapped, Unicode turned
//     into A-labels), then lower-case ASCII without a trailing dot;
//   - an IP address is in one form: IPv4 dotted decimal (also when spelled
//     as the WHATWG URL standard allows: 2130706433, 0x7f.1, 127.1),
//     IPv4-mapped IPv6 (::ffff:7f00:1) unmapped to its IPv4 address, other
//     IPv6 as RFC 5952 prints it, without brackets (Authority adds them);
//   - the port is apart (Authority), and a URL's default port is dropped.
//
// Go's HTTP client maps a Unicode host the same way before it dials, so the
// Name is the host the client would reach. Registrable gives the unit that
// budgets count (the registrable domain, from the public suffix list).
//
// The package imports no other Herald package: everything else may use it.
package host

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Name is a host in its one canonical form: an ASCII domain name in lower
// case without a trailing dot, or an IP address (IPv6 without brackets).
// The zero Name is no host.
type Name string

// String is the name as it is stored and shown.
func (n Name) String() string { return string(n) }

// Addr returns the IP address a Name is, if it is one.
func (n Name) Addr() (netip.Addr, bool) {
	a, err := netip.ParseAddr(string(n))
	return a, err == nil
}

// IsIP reports whether the Name is an IP address.
func (n Name) IsIP() bool {
	_, ok := n.Addr()
	return ok
}

// Chain is the name and every domain above it, most specific first:
// a.b.example.com, b.example.com, example.com, com. A block or an allow of
// any of them covers the name. An IP address is only itself: an entry for
// 10.0.0.2 covers no domain that happens to end in it.
func (n Name) Chain() []Name {
	if n == "" {
		return nil
	}
	if n.IsIP() {
		return []Name{n}
	}
	chain := []Name{n}
	s := string(n)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' && i+1 < len(s) {
			chain = append(chain, Name(s[i+1:]))
		}
	}
	return chain
}

// Within reports whether n is d or a subdomain of d. An IP address is
// within itself only.
func (n Name) Within(d Name) bool {
	if n == "" || d == "" {
		return false
	}
	if n == d {
		return true
	}
	return !n.IsIP() && !d.IsIP() && strings.HasSuffix(string(n), "."+string(d))
}

// Registrable is the unit that shared budgets count: the registrable
// domain (one label more than the public suffix: a.b.example.co.uk gives
// example.co.uk; a name under a hosting provider's suffix such as
// github.io gives the user's own name), so that throwaway names under one
// wildcard domain share one budget. A name that is itself a public suffix,
// or has a single label, is its own unit. An IPv4 address is its own unit;
// an IPv6 address counts as its /64, the block one site is given.
func (n Name) Registrable() string {
	if a, ok := n.Addr(); ok {
		if a.Is6() {
			return netip.PrefixFrom(a, 64).Masked().String()
		}
		return a.String()
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(string(n))
	if err != nil {
		return string(n)
	}
	return d
}

// Authority is a host and a port: the unit per-host queues, pauses and the
// origin rules key by. Port is "" for the scheme's default port.
type Authority struct {
	Name Name
	Port string
}

// String is host, [v6], host:port or [v6]:port.
func (a Authority) String() string {
	h := string(a.Name)
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if a.Port == "" {
		return h
	}
	return h + ":" + a.Port
}

// Errors of the parsers; the messages say what is wrong with the input.
var (
	// ErrNoHost: the input names no host (empty, or a URL without one).
	ErrNoHost = errors.New("no host")
	// ErrNotHost: the input is not a host name or address.
	ErrNotHost = errors.New("not a valid host name")
	// ErrNotHTTP: a URL that is not an absolute http(s) URL.
	ErrNotHTTP = errors.New("not an absolute http(s) URL")
)

// lookup maps a host as IDNA lookup does (UTS #46, non-transitional), the
// mapping Go's HTTP client applies before it dials, but accepts the ASCII
// that real hosts carry beyond STD3 (an underscore): parse checks the
// characters itself.
var lookup = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(true),
)

// strict is the operator's profile (ParseOperator): STD3 names only.
var strict = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.CheckHyphens(true),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(true),
)

// Parse reads a host as it comes out of a URL, a keyId, a handle or a
// list: a domain name (any case, Unicode or A-labels, full-width, with or
// without a trailing dot) or an IP address (IPv6 with or without
// brackets). It refuses a port, a zone, and any character no host name
// has.
func Parse(s string) (Name, error) {
	return parse(s, lookup)
}

// ParseOperator is Parse for what an operator types to block, allow or
// pause a host: the same canonical form, but only names of letters,
// digits and hyphens, and an error that says what to give instead of a
// URL or a host:port.
func ParseOperator(s string) (Name, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("%w: empty host name", ErrNoHost)
	case strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@"):
		return "", fmt.Errorf("%w: give a host name, not a URL", ErrNotHost)
	}
	if n, ok := parseIP(s); ok {
		return n, nil
	}
	if strings.Contains(s, ":") {
		return "", fmt.Errorf("%w: give a host name without a port: blocks match a host whatever its port", ErrNotHost)
	}
	n, err := parse(s, strict)
	if err != nil {
		// parse's errors wrap ErrNotHost and the detail both (errors.Unwrap
		// of them is nil): the detail is what follows ErrNotHost's words.
		detail := strings.TrimPrefix(err.Error(), ErrNotHost.Error()+": ")
		return "", fmt.Errorf("%w (letters, digits and hyphens in labels separated by dots; internationalised names are accepted): %s", ErrNotHost, detail)
	}
	return n, nil
}

func parse(s string, p *idna.Profile) (Name, error) {
	if s == "" {
		return "", ErrNoHost
	}
	if n, ok := parseIP(s); ok {
		return n, nil
	}
	if strings.ContainsAny(s, ":[]%") {
		return "", fmt.Errorf("%w: %q", ErrNotHost, s)
	}
	// One trailing dot goes, in any of the spellings the mapping turns
	// into one ("a.." stays no host).
	for _, dot := range []string{".", "\u3002", "\uff0e", "\uff61"} {
		if t, ok := strings.CutSuffix(s, dot); ok {
			s = t
			break
		}
	}
	ascii, err := p.ToASCII(s)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotHost, err)
	}
	if ascii == "" || !validASCII(ascii) {
		return "", fmt.Errorf("%w: %q", ErrNotHost, s)
	}
	// A name whose last label is a number is an IPv4 address to the URL
	// standard and to C resolvers (127.1, 0x7f000001): read it as one.
	if isNumber(ascii[strings.LastIndexByte(ascii, '.')+1:]) {
		n, ok := parseIPv4Number(ascii)
		if !ok {
			return "", fmt.Errorf("%w: %q is no IPv4 address", ErrNotHost, s)
		}
		return n, nil
	}
	return Name(ascii), nil
}

// validASCII reports whether s is dot-separated labels of 1 to 63 letters
// (lower case by now), digits, hyphens and underscores.
func validASCII(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return len(s) <= 253
}

// parseIP reads an IP literal, bracketed or not, without a zone, unmapping
// IPv4-mapped IPv6.
func parseIP(s string) (Name, bool) {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	} else if strings.ContainsAny(s, "[]") {
		return "", false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return "", false
	}
	return Name(a.Unmap().String()), true
}

// ParseAuthority reads host[:port] (a Host header, a delivery's host
// column, a host an operator names with its port). The port must be a
// number from 1 to 65535.
func ParseAuthority(s string) (Authority, error) {
	h, port := s, ""
	if i := strings.LastIndexByte(s, ':'); i >= 0 && (!strings.Contains(s[:i], ":") || strings.HasPrefix(s, "[")) {
		if strings.HasPrefix(s, "[") && !strings.HasSuffix(s[:i], "]") {
			// [v6] alone: the colon is inside the brackets.
		} else {
			h, port = s[:i], s[i+1:]
			if !validPort(port) {
				return Authority{}, fmt.Errorf("%w: bad port in %q", ErrNotHost, s)
			}
		}
	}
	n, err := Parse(h)
	if err != nil {
		return Authority{}, err
	}
	return Authority{Name: n, Port: port}, nil
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 || p[0] == '0' {
		return false
	}
	v := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		v = v*10 + int(p[i]-'0')
	}
	return v <= 65535
}

// OfURL is the authority of an absolute http(s) URL, its default port (443
// for https, 80 for http) dropped, so https://A.example:443/x and
// https://a.example/y share a.example.
func OfURL(raw string) (Authority, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Authority{}, fmt.Errorf("%w: %q", ErrNotHTTP, raw)
	}
	return FromURL(u)
}

// FromURL is OfURL for a parsed URL.
func FromURL(u *url.URL) (Authority, error) {
	if u == nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Opaque != "" {
		return Authority{}, ErrNotHTTP
	}
	a, err := ParseAuthority(u.Host)
	if err != nil {
		return Authority{}, err
	}
	if (u.Scheme == "https" && a.Port == "443") || (u.Scheme == "http" && a.Port == "80") {
		a.Port = ""
	}
	return a, nil
}

// NameOf is the Name of an absolute http(s) URL's host: the unit domain
// blocks match.
func NameOf(raw string) (Name, error) {
	a, err := OfURL(raw)
	return a.Name, err
}

// SameAuthority reports whether a and b are both absolute http(s) URLs on
// one authority.
func SameAuthority(a, b string) bool {
	x, err1 := OfURL(a)
	y, err2 := OfURL(b)
	return err1 == nil && err2 == nil && x == y
}

// AuthorityOf is OfURL as a string, "" for anything that is not an
// absolute http(s) URL (a relative or non-http IRI has no origin Herald
// could check): the unit the inbox's origin rules compare. Mastodon's
// invalid_origin? and trustworthy_attribution?
// (app/helpers/jsonld_helper.rb,
// app/services/activitypub/fetch_remote_status_service.rb) compare the
// host alone; keeping the port is stricter, and makes two servers on one
// host (common in tests) two origins.
func AuthorityOf(raw string) string {
	a, err := OfURL(raw)
	if err != nil {
		return ""
	}
	return a.String()
}
