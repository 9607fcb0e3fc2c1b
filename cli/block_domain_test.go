package cli

import (
	"strings"
	"testing"
)

// TestBlockBadDomainSaysItOnce: a URL, an empty name, a single word or a
// name with an underscore (no server's host) is a usage error whose
// advice is given once, and nothing is blocked.
func TestBlockBadDomainSaysItOnce(t *testing.T) {
	db := newInstance(t, "a.example")
	for _, arg := range []string{"http://x.example/", "x.example:443", "", "NOT-A-HOST", "x_y.example"} {
		code, _, errOut := runCLI(t, nil, "block", arg, "--db", db)
		if code != 2 || strings.Count(errOut, "give a host name") != 1 || strings.Contains(errOut, "<nil>") {
			t.Errorf("block %q: exit %d %q, want 2 with the advice once", arg, code, errOut)
		}
	}
	if out := mustCLI(t, "blocks", "--db", db); strings.Contains(out, "x.example") || strings.Contains(out, "not-a-host") {
		t.Errorf("a refused domain was listed:\n%s", out)
	}
}
