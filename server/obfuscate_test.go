package server

import "testing"

// TestObfuscate stars the middle of a domain as Mastodon's public_domain
// does, keeping the dots.
func TestObfuscate(t *testing.T) {
	for in, want := range map[string]string{
		"bad.example":     "bad.*****le",
		"a.b":             "a.*",
		"evil.social.org": "evil.******.org",
	} {
		if got := obfuscate(in); got != want {
			t.Errorf("obfuscate(%q) = %q, want %q", in, got, want)
		}
	}
}
