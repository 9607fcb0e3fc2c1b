package cli

import "testing"

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
