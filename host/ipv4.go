package host

import (
	"net/netip"
	"strconv"
	"strings"
)

// parseIPv4Number reads a host whose last label is a number as the WHATWG
// URL standard's IPv4 parser does (https://url.spec.whatwg.org/#concept-ipv4-parser):
// one to four parts, each decimal, octal (leading 0) or hex (0x), the last
// filling the remaining bytes, so 2130706433, 0x7f.1 and 127.1 are all
// 127.0.0.1. Browsers and C resolvers read such hosts as addresses, so a
// block of 127.0.0.1 must see them as that address. ok is false for a host
// that is no valid address (a part too large, five parts, a part that is
// no number): no host at all.
func parseIPv4Number(s string) (Name, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return "", false
	}
	var nums []uint64
	for _, p := range parts {
		v, ok := ipv4Part(p)
		if !ok {
			return "", false
		}
		nums = append(nums, v)
	}
	last := nums[len(nums)-1]
	for _, v := range nums[:len(nums)-1] {
		if v > 255 {
			return "", false
		}
	}
	if last >= 1<<(8*(5-len(nums))) {
		return "", false
	}
	var addr uint64
	for i, v := range nums[:len(nums)-1] {
		addr |= v << (8 * (3 - i))
	}
	addr |= last
	b := [4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)}
	return Name(netip.AddrFrom4(b).String()), true
}

// isNumber reports whether a label is a number in one of the IPv4 parser's
// bases (what makes the standard read the whole host as an address).
// (The standard's "ends in a number": digits only, or 0x and hex digits,
// however large.)
func isNumber(label string) bool {
	digits := "0123456789"
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		label, digits = rest, "0123456789abcdef"
		if label == "" {
			return true
		}
	}
	return label != "" && strings.Trim(label, digits) == ""
}

func ipv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true // "0x" is zero
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}
