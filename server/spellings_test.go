package server_test

import (
	"context"
	"net"
	"testing"

	"herald/host"
	"herald/internal/fedtest"
)

// TestBlockedHostInEverySpelling (issue 26 items 1 and 2): a blocked
// address or domain is refused in every spelling of it that reaches the
// same server: IPv4-mapped IPv6, its hex form, Unicode for a name blocked
// in punycode and the reverse, upper case, full-width letters and the
// ideographic full stop. Each remote listens on loopback, and names go
// to it through the test's resolver; Herald must not contact it at all.
func TestBlockedHostInEverySpelling(t *testing.T) {
	for _, c := range []struct {
		name     string
		block    string // as the operator typed it (herald block parses it)
		ip       string // where the remote listens
		resolves string // the name the test's resolver maps to ip ("" for an address)
		spelled  string // the host in the remote's ids and keyId
	}{
		{"IPv4-mapped", "127.0.0.61", "127.0.0.61", "", "[::ffff:127.0.0.61]"},
		{"IPv4-mapped, hex", "127.0.0.62", "127.0.0.62", "", "[::ffff:7f00:3e]"},
		{"Unicode of a punycode block", "xn--bcher-kva.test", "127.0.2.61", "xn--bcher-kva.test", "bücher.test"},
		{"upper case Unicode", "xn--bcher-kva.test", "127.0.2.62", "xn--bcher-kva.test", "BÜCHER.TEST"},
		{"punycode of a Unicode block", "Bücher.Example", "127.0.2.63", "xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"full-width", "blocked.test", "127.0.2.64", "blocked.test", "ｂｌｏｃｋｅｄ.test"},
		{"ideographic full stop", "blocked.test", "127.0.2.65", "blocked.test", "blocked。test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newSecureHerald(t)
			var r *fedtest.Remote
			if c.resolves != "" {
				r = fedtest.NewNamedRemote(t, c.ip, c.resolves)
			} else {
				r = fedtest.NewRemote(t, c.ip)
			}
			_, port, _ := net.SplitHostPort(r.Host)
			r.Host = c.spelled + ":" + port
			r.URL = "http://" + r.Host
			bob := r.Actor(t, "bob")
			if _, err := h.DB.BlockDomain(context.Background(), mustParse(t, c.block), ""); err != nil {
				t.Fatal(err)
			}
			refusedEverywhere(t, h, r, bob)
			if n := r.Requests.Load(); n != 0 {
				t.Errorf("the blocked server, spelled %s, was contacted %d times", c.spelled, n)
			}
		})
	}
}

// mustParse is the domain as `herald block` stores it.
func mustParse(t *testing.T, s string) string {
	t.Helper()
	n, err := host.ParseOperator(s)
	if err != nil {
		t.Fatal(err)
	}
	return n.String()
}
