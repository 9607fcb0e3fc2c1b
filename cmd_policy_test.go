package main

import (
	"strings"
	"testing"
)

// TestCLIAllowlist: the allowlist commands, and the mode serve records.
func TestCLIAllowlist(t *testing.T) {
	db := newInstance(t, "social.example")
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"allow", "--db", db}, 2, "subcommand"},
		{[]string{"allow", "add", "--db", db}, 2, "usage"},
		{[]string{"allow", "add", "https://friend.example/", "--db", db}, 1, "invalid domain"},
		{[]string{"allow", "add", "Friend.Example", "--reason", "ours", "--db", db}, 0, "allowed friend.example and its subdomains (*.friend.example)"},
		{[]string{"allow", "add", "10.1.2.3", "--db", db}, 0, "allowed 10.1.2.3\n"},
		{[]string{"allow", "list", "--db", db}, 0, "the allowlist is not used until"},
		{[]string{"allow", "remove", "10.1.2.3", "--db", db}, 0, "removed 10.1.2.3"},
		{[]string{"allow", "remove", "10.1.2.3", "--db", db}, 1, "not on the allowlist"},
		{[]string{"block", "bad.example", "--db", db}, 0, "blocked bad.example and its subdomains (*.bad.example)"},
		{[]string{"serve", "--federation-mode", "open", "--db", db}, 2, "want blocklist or allowlist"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, nil, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q", s.args, code, out, errOut)
		}
	}
	serveInProcess(t, db, "--federation-mode", "allowlist")
	out := mustCLI(t, "allow", "list", "--db", db)
	if !strings.Contains(out, "federation mode: allowlist") || !strings.Contains(out, "friend.example") || !strings.Contains(out, "ours") {
		t.Errorf("allow list in allowlist mode: %q", out)
	}
}
