package cli

import (
	"strings"
	"testing"
)

// TestSameLoopbackOrEqual: the quick start's localhost:8080 is the
// listener 127.0.0.1:8080, not a proxy in front of it; another port, or a
// public name, is.
func TestSameLoopbackOrEqual(t *testing.T) {
	for _, c := range []struct {
		public, listen string
		want           bool
	}{
		{"localhost:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "[::1]:8080", true},
		{"social.example:443", "social.example:443", true},
		{"localhost:8443", "127.0.0.1:8080", false},
		{"social.example:443", "127.0.0.1:443", false},
	} {
		if got := sameLoopbackOrEqual(c.public, c.listen); got != c.want {
			t.Errorf("sameLoopbackOrEqual(%q, %q) = %v, want %v", c.public, c.listen, got, c.want)
		}
	}
}

// TestDoctorBadPeer: a --peer that names no host is a usage error before
// any check runs, not a clock warning about a peer that does not answer.
func TestDoctorBadPeer(t *testing.T) {
	db := newInstance(t, "a.example")
	for _, peer := range []string{"not a host!", "ftp://x.example/", "https://"} {
		code, out, errOut := runCLI(t, nil, "doctor", "--peer", peer, "--db", db)
		if code != 2 || !strings.Contains(errOut, "invalid --peer") || out != "" {
			t.Errorf("doctor --peer %q: exit %d, stdout %q, stderr %q; want 2, the flag named, no checks", peer, code, out, errOut)
		}
	}
	for _, peer := range []string{"mastodon.social", "https://127.0.0.1:1/"} {
		if _, err := peerURL(peer); err != nil {
			t.Errorf("peerURL(%q): %v", peer, err)
		}
	}
}
