package cli

import (
	"strings"
	"testing"
)

// TestCLIModeration runs the moderation commands as the docs give them:
// suspending and lifting a local actor's suspension, suspending, limiting
// and clearing a remote account, limiting a domain; each says what it did,
// and a wrong argument is a usage error that changes nothing.
func TestCLIModeration(t *testing.T) {
	db := newInstance(t, "a.example")
	mustCLI(t, "actor", "add", "alice", "--db", db)
	if out := mustCLI(t, "actor", "suspend", "alice", "--reason", "spam", "--db", db); !strings.Contains(out, "suspended alice") {
		t.Errorf("suspend: %q", out)
	}
	if out := mustCLI(t, "actor", "suspend", "alice", "--db", db); !strings.Contains(out, "suspended already") {
		t.Errorf("second suspend: %q", out)
	}
	if out := mustCLI(t, "actor", "unsuspend", "alice", "--db", db); !strings.Contains(out, "unsuspended alice") {
		t.Errorf("unsuspend: %q", out)
	}
	if code, _, errOut := runCLI(t, nil, "actor", "unsuspend", "alice", "--db", db); code != 1 || !strings.Contains(errOut, "not suspended") {
		t.Errorf("unsuspend of an actor not suspended: exit %d %q", code, errOut)
	}

	troll := "https://bad.example/users/troll"
	if out := mustCLI(t, "account", "suspend", troll, "--reason", "abuse", "--db", db); !strings.Contains(out, "suspended "+troll) {
		t.Errorf("account suspend: %q", out)
	}
	mustCLI(t, "account", "limit", "https://loud.example/users/dan", "--db", db)
	out := mustCLI(t, "accounts", "--db", db)
	if !strings.Contains(out, troll) || !strings.Contains(out, "suspend") || !strings.Contains(out, "abuse") || !strings.Contains(out, "loud.example/users/dan   limit") {
		t.Errorf("accounts:\n%s", out)
	}
	mustCLI(t, "account", "clear", troll, "--db", db)
	if out := mustCLI(t, "accounts", "--db", db); strings.Contains(out, troll) {
		t.Errorf("cleared account still listed:\n%s", out)
	}
	if code, _, _ := runCLI(t, nil, "account", "suspend", "@troll@bad.example", "--db", db); code != 2 {
		t.Errorf("a handle instead of an actor id: exit %d, want 2", code)
	}

	if out := mustCLI(t, "block", "loud.example", "--severity", "limit", "--reject-media", "--db", db); !strings.Contains(out, "limited (media rejected): loud.example") {
		t.Errorf("block --severity limit: %q", out)
	}
	if out := mustCLI(t, "blocks", "--db", db); !strings.Contains(out, "limit") || !strings.Contains(out, "media") {
		t.Errorf("blocks:\n%s", out)
	}
	if code, _, _ := runCLI(t, nil, "block", "x.example", "--severity", "sometimes", "--db", db); code != 2 {
		t.Errorf("unknown severity: exit %d, want 2", code)
	}
}
