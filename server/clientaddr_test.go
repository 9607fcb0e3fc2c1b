package server

import (
	"net/http"
	"net/netip"
	"testing"
)

// TestClientAddr: the client is the rightmost hop that is not a trusted
// proxy; what an untrusted hop claims is never believed.
func TestClientAddr(t *testing.T) {
	lan := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name      string
		peer      string
		headers   [][2]string
		client    string
		forwarded bool
	}{
		{"no header", "10.0.0.5", nil, "10.0.0.5", false},
		{"one hop", "10.0.0.5", [][2]string{{"X-Forwarded-For", "198.51.100.7"}}, "198.51.100.7", true},
		{"client spoofs a hop before the proxy", "10.0.0.5", [][2]string{{"X-Forwarded-For", "203.0.113.1, 198.51.100.7"}}, "198.51.100.7", true},
		{"two trusted proxies", "10.0.0.5", [][2]string{{"X-Forwarded-For", "203.0.113.1, 198.51.100.7, 10.0.0.9"}}, "198.51.100.7", true},
		{"every hop trusted: the leftmost", "10.0.0.5", [][2]string{{"X-Forwarded-For", "10.0.0.8, 10.0.0.9"}}, "10.0.0.8", true},
		{"several header lines are one list", "10.0.0.5", [][2]string{{"X-Forwarded-For", "203.0.113.1"}, {"X-Forwarded-For", "198.51.100.7"}}, "198.51.100.7", true},
		{"garbage stops at the hop that reported it", "10.0.0.5", [][2]string{{"X-Forwarded-For", "198.51.100.7, nonsense, 10.0.0.9"}}, "10.0.0.9", true},
		{"garbage next to the peer: the peer", "10.0.0.5", [][2]string{{"X-Forwarded-For", "nonsense"}}, "10.0.0.5", false},
		{"Forwarded", "10.0.0.5", [][2]string{{"Forwarded", `for=203.0.113.1, for="[2001:db8::7]:4711";proto=https`}}, "2001:db8::7", true},
		{"Forwarded unknown", "10.0.0.5", [][2]string{{"Forwarded", `for=203.0.113.1, for=unknown`}}, "10.0.0.5", false},
		{"X-Forwarded-For wins over Forwarded", "10.0.0.5", [][2]string{{"Forwarded", "for=203.0.113.1"}, {"X-Forwarded-For", "198.51.100.7"}}, "198.51.100.7", true},
		{"a port on a hop", "10.0.0.5", [][2]string{{"X-Forwarded-For", "198.51.100.7:5000"}}, "198.51.100.7", true},
		{"IPv4 in IPv6", "10.0.0.5", [][2]string{{"X-Forwarded-For", "::ffff:198.51.100.7"}}, "198.51.100.7", true},
	}
	for _, c := range cases {
		h := http.Header{}
		for _, kv := range c.headers {
			h.Add(kv[0], kv[1])
		}
		client, forwarded := clientAddr(h, netip.MustParseAddr(c.peer), lan)
		if client.String() != c.client || forwarded != c.forwarded {
			t.Errorf("%s: %v %v, want %s %v", c.name, client, forwarded, c.client, c.forwarded)
		}
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies("10.0.0.0/24, 192.0.2.7,::1, 10.1.2.3/16")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/24", "192.0.2.7/32", "::1/128", "10.1.0.0/16"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("%d: %v, want %s", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "10.0.0.0/33", "proxy.example", ","} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
