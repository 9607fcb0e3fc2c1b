package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeChecksEveryValueFirst: a serve with a bad value exits 2 with a
// one-line message and leaves nothing behind: no database, no wake pipe,
// no media folder.
func TestServeChecksEveryValueFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--listen", ":99999"}, `invalid --listen ":99999"`},
		{[]string{"--listen", "127.0.0.1:-1"}, "--listen"},
		{[]string{"--listen", "nope"}, "--listen"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--inbox-rate", "fast"}, "--inbox-rate"},
		{[]string{"--role", "worker"}, "needs PostgreSQL"},
		{[]string{"--tls-cert", "missing.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--domain", "https://x.example/"}, "--domain"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "h.db")
		args := append([]string{"serve", "--db", path, "--media-dir", filepath.Join(dir, "media")}, c.args...)
		code, out, errOut := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(errOut, c.msg) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("serve %v: exit %d, %q %q; want 2 and %q on one line", c.args, code, out, errOut, c.msg)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("serve %v left %d files behind (%s, ...)", c.args, len(left), left[0].Name())
		}
	}
}
