package federation

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"code.dny.dev/ssrf"
)

// ErrForbiddenAddress is returned (wrapped in the usual *url.Error and
// *net.OpError) when the outbound client refuses to connect to an address:
// loopback, private, link-local, CGNAT, multicast, documentation and other
// special-purpose ranges. Delivery treats it as permanent: retrying cannot
// make a private address public.
var ErrForbiddenAddress = errors.New("forbidden destination address")

// guardian holds the ssrf package's deny lists (the IANA special-purpose
// registries). Any port is allowed: fediverse servers do run on host:port,
// and the danger lies in the address, not the port.
var guardian = ssrf.New(ssrf.WithAnyPort())

// nat64 is the well-known NAT64 prefix (RFC 6052). An address in it is an
// IPv4 address in disguise; a DNS64 resolver can hand out 64:ff9b::7f00:1
// for 127.0.0.1, so the embedded address is what must be checked.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// CheckAddr reports why the outbound client must not connect to a, or nil if
// it may. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) forms are
// judged by the IPv4 address they carry, so a public IPv4 server stays
// reachable from an IPv6-only host and a private one stays unreachable in
// every spelling.
func CheckAddr(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrForbiddenAddress)
	}
	a = a.WithZone("")
	switch {
	case a.Is4In6():
		a = a.Unmap()
	case nat64.Contains(a):
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	if err := guardian.SafeAddr(a); err != nil {
		return fmt.Errorf("%w: %w", ErrForbiddenAddress, err)
	}
	return nil
}

// AllowedAddr reports whether the outbound client may connect to a.
func AllowedAddr(a netip.Addr) bool { return CheckAddr(a) == nil }

// guardControl is the net.Dialer Control hook. It runs after name resolution
// and before connect(2), once for every address actually dialled (each
// Happy Eyeballs attempt included), so a name that resolves, or re-resolves
// after a DNS rebinding, to a forbidden address never gets a connection.
func guardControl(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %q", ErrForbiddenAddress, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrForbiddenAddress, err)
	}
	return CheckAddr(ap.Addr())
}
