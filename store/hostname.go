package store

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// hostProfile is how ParseHost reads a host name: UTS #46 mapping for
// lookup (which lower-cases and folds what IDNA folds), the bidi rule,
// STD3 rules (letters, digits and hyphens only, no leading or trailing
// hyphen) and DNS lengths (labels of 1 to 63 octets, 253 in all).
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.CheckHyphens(true),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(true),
)

// ParseHost checks a host name given by the operator (to block it, say)
// and returns it as domain blocks match it: ASCII (IDNA A-labels for an
// internationalised name), lower case, without a trailing dot; or an IP
// address in its canonical form. The error says why anything else is
// refused: a URL, a port, a character no host name has.
func ParseHost(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", errors.New("empty host name")
	case strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@"):
		return "", errors.New("give a host name, not a URL")
	}
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil && ip.Zone() == "" {
		return ip.String(), nil
	}
	if strings.Contains(s, ":") {
		return "", errors.New("give a host name without a port: blocks match a host whatever its port")
	}
	ascii, err := hostProfile.ToASCII(strings.TrimSuffix(s, "."))
	if err != nil {
		return "", fmt.Errorf("not a valid host name (letters, digits and hyphens in labels separated by dots; internationalised names are accepted): %v", err)
	}
	return ascii, nil
}
