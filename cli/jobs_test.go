package cli

import (
	"strings"
	"testing"
)

// TestCountsArePositive: a count of 0 or less is a bad value (exit 2),
// not a query the engines answer differently (SQLite: no limit,
// PostgreSQL: an error).
func TestCountsArePositive(t *testing.T) {
	path := newInstance(t, "h.example")
	for _, args := range [][]string{{"jobs", "-n", "0"}, {"jobs", "-n", "-1"}, {"webhook", "deliveries", "1", "-n", "0"}} {
		code, out, errOut := runCLI(t, nil, append(args, "--db", path)...)
		if code != 2 || !strings.Contains(errOut, "invalid -n") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
	if out := mustCLI(t, "jobs", "-n", "1", "--db", path); !strings.HasPrefix(out, "ID ") {
		t.Errorf("jobs -n 1: %q", out)
	}
}
